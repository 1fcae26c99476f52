"""The committed example runs (results/examples/*) tell the truth about how their servers were launched: every
command in a cohort.json is what its stack.json says ran (placeholders aside, values intact, nothing redacted
that is no secret), and every command line in a report is one of those. That each is a valid command line for
its vLLM version's own parser is checked in tests/integration/stacks/test_example_commands_parse.py."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import pytest

from eval.secrets import REDACTED, is_secret_name
from tests.fixtures.examples import RUNS, cohort_dirs, synthetic, words

PLACEHOLDER = re.compile(r"\{[a-z_.0-9]+\}")


def same(shown: str, ran: str) -> bool:
    """A shown word equals what ran, its `{placeholder}` parts standing for anything."""
    parts = [re.escape(p) for p in PLACEHOLDER.split(shown)]
    return re.fullmatch(".+".join(parts), ran) is not None


def redactions_are_secrets(argv: list[str]) -> list[str]:
    """Words `<redacted>` that do not follow a secret flag (`--api-key <redacted>`)."""
    bad = []
    for i, word in enumerate(argv):
        if REDACTED in word:
            flag = argv[i - 1] if i and argv[i - 1].startswith("--") else word.partition("=")[0]
            if not (flag.startswith("--") and is_secret_name(flag[2:].partition("=")[0])):
                bad.append(f"{flag} {word}")
    return bad


def mismatches(shown: list[str], ran: list[str]) -> list[str]:
    if len(shown) != len(ran):
        return [f"{len(shown)} words shown, {len(ran)} ran:\n  {shlex.join(shown)}\n  {shlex.join(ran)}"]
    return [f"shown {a!r}, ran {b!r}" for a, b in zip(shown, ran, strict=True) if not same(a, b)]


def ran_commands(cohort_dir: Path) -> list[list[str]]:
    """What ran, less what a stack resolves at launch for a vllm-router: the executable's path (found like PATH
    would) and the Prometheus port specqual picks when it starts it (eval/stacks/local.py: 29000 is taken when
    two P/D stacks overlap)."""
    stack: dict[str, Any] = json.loads((cohort_dir / "stack.json").read_text())
    out = []
    for c in stack["commands"]:
        argv = list(c["argv"])
        if Path(argv[0]).name == "vllm-router":
            argv[0] = "vllm-router"
            if argv[-2:-1] == ["--prometheus-port"]:
                argv = argv[:-2]
        out.append(argv)
    return out


@pytest.mark.parametrize("run", RUNS, ids=[r.name for r in RUNS])
def test_cohort_commands_are_what_ran(run: Path) -> None:
    problems = []
    for cdir in cohort_dirs(run):
        shown = [words(c) for c in json.loads((cdir / "cohort.json").read_text())["commands"]]
        problems += [f"{cdir.name}: {b}" for argv in shown for b in redactions_are_secrets(argv)]
        if not synthetic(run) and (cdir / "stack.json").is_file():
            ran = ran_commands(cdir)
            assert len(shown) == len(ran), cdir
            problems += [f"{cdir.name}: {m}" for s, r in zip(shown, ran, strict=True) for m in mismatches(s, r)]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("run", RUNS, ids=[r.name for r in RUNS])
def test_report_commands_are_the_cohorts_commands(run: Path) -> None:
    commands = {c for cdir in cohort_dirs(run) for c in json.loads((cdir / "cohort.json").read_text())["commands"]}
    report = run / "report.md"
    if not report.is_file():
        pytest.skip(f"{run.name} has no report.md")
    shown = [ln.strip() for ln in report.read_text().splitlines() if "vllm.entrypoints" in ln or "vllm serve" in ln]
    assert all(ln in commands for ln in shown), [ln for ln in shown if ln not in commands]


def redacted_keys(tree: Any, path: str = "") -> list[str]:
    """Paths of `<redacted>` values whose key is no secret's name."""
    if isinstance(tree, dict):
        return [b for k, v in tree.items() for b in redacted_keys(v, f"{path}.{k}" if path else str(k))]
    if isinstance(tree, list):
        return [b for i, v in enumerate(tree) for b in redacted_keys(v, f"{path}[{i}]")]
    return [path] if tree == REDACTED and not is_secret_name(path.rsplit(".", 1)[-1]) else []


@pytest.mark.parametrize("run", RUNS, ids=[r.name for r in RUNS])
def test_the_recorded_cohort_file_keeps_its_values(run: Path) -> None:
    assert not redacted_keys(json.loads((run / "run.json").read_text())["spec"])


def test_the_checks_see_a_lost_flag() -> None:
    shown = words("A=1 '{python}' -m vllm.entrypoints.openai.api_server --x '<redacted>' 0.2 --api-key '<redacted>'")
    ran = ["/py", "-m", "vllm.entrypoints.openai.api_server", "--x", "--gpu-memory-utilization", "0.2"]
    ran += ["--api-key", REDACTED]  # stack.json redacts secrets too
    assert redactions_are_secrets(shown) == ["--x <redacted>"]
    assert mismatches(shown, ran) == ["shown '<redacted>', ran '--gpu-memory-utilization'"]
    assert redacted_keys({"a": {"max_tokens": REDACTED, "api_key": REDACTED}}) == ["a.max_tokens"]
