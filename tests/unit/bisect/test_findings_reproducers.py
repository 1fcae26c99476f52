"""The reproducers of docs/findings/ stay standalone: an upstream developer runs them with Python and httpx (the
server ones) or with the vLLM build's own interpreter (the server-free one), without specqual installed."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

FINDINGS = Path(__file__).resolve().parents[3] / "docs" / "findings"
SERVER_SCRIPTS = ["min_tokens_bonus_repro.py", "engine_crash_repro.py", "structured_stop_ids_repro.py"]
BUILD_SCRIPTS = ["expand_kernel_repro.py"]


def _top_imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("name", SERVER_SCRIPTS + BUILD_SCRIPTS)
def test_reproducer_imports_only_the_stdlib_and_what_its_doc_names(name: str) -> None:
    allowed = {"httpx"} if name in SERVER_SCRIPTS else {"torch", "vllm"}
    outside = {m for m in _top_imports(FINDINGS / name) if m not in sys.stdlib_module_names} - allowed
    assert not outside, f"{name} imports {sorted(outside)}: not standalone"


@pytest.mark.parametrize("case", ["seeded-chunked", "topk-draft-rows", "draft-greedy"])
def test_engine_crash_repro_prints_its_server_command(case: str, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(FINDINGS / "engine_crash_repro.py"), "--case", case, "--print-command", "--model", "M"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    cmd = done.stdout.strip()
    assert cmd.startswith("python -m vllm.entrypoints.openai.api_server --model M")
    if case == "seeded-chunked":
        assert "--max-num-batched-tokens 32" in cmd and "--speculative-config" not in cmd
    else:
        assert '"method": "draft_model"' in cmd and "--max-num-batched-tokens" not in cmd
