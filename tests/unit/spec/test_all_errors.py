"""`specqual validate` catches what a cohort file can get wrong before anything starts, including the agent block,
and lists every problem at once, each naming the file (or override) and the field."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from eval.cli import app

AGENT = "workloads.swebench.agent"


def validate(path: Path, *args: str) -> tuple[int, list[str]]:
    result = CliRunner().invoke(app, ["validate", str(path), *args])
    return result.exit_code, result.output.strip().splitlines()


def agent(**fields: Any) -> Any:
    def edit(d: dict[str, Any]) -> None:
        d["workloads"]["swebench"]["agent"] = fields

    return edit


@pytest.mark.parametrize(
    ("fields", "field", "expected"),
    [
        ({"tools": ["bash", "python"]}, f"{AGENT}.tools", "unknown tools ['python'] (known: bash, submit)"),
        ({"tools": ["bash", "bash"]}, f"{AGENT}.tools", "a tool is named twice"),
        ({"feedback": {"no_tool_cal": "x"}}, f"{AGENT}.feedback", "unknown feedback kinds ['no_tool_cal']"),
        ({"feedback": {"unknown_tool": "no {tool}"}}, f"{AGENT}.feedback", "unknown_tool: the message does not"),
        ({"feedback": {"missing_command": 'e.g. {"command": "ls"}'}}, f"{AGENT}.feedback", "does not format"),
        ({"final_answer_pattern": "DONE("}, f"{AGENT}.final_answer_pattern", "not a regular expression"),
        ({"kind": "toolcal"}, f"{AGENT}.kind", "unknown name 'toolcal'"),
    ],
)
def test_a_bad_agent_block_is_caught_by_validate(write_spec, fields, field, expected) -> None:
    path = write_spec(agent(**fields))
    code, lines = validate(path)
    assert code == 2 and len(lines) == 1, lines
    assert lines[0].startswith(f"error: {path}: {field}: ") and expected in lines[0], lines[0]


def test_a_good_agent_block_passes(write_spec) -> None:
    fields = {"tools": ["bash", "submit"], "final_answer_pattern": r"DONE\.$"}
    fields["feedback"] = {"unknown_tool": "No `{name}`; use one of {tools}.", "missing_command": '{{"command": 1}}'}
    code, lines = validate(write_spec(agent(**fields)))
    assert code == 0 and lines[0].startswith("ok: mini"), lines


def test_three_errors_are_listed_all_three(write_spec) -> None:
    def three(d: dict[str, Any]) -> None:
        d["model"]["dtype"] = "fp33"
        d["sampling"] = {"temperature": -1}
        d["workloads"]["swebench"]["agent"] = {"tools": ["python"]}

    path = write_spec(three)
    code, lines = validate(path)
    assert code == 2 and lines[0] == "error: 3 problems:", lines
    assert len(lines) == 4 and all(ln.startswith(f"  {path}: ") for ln in lines[1:]), lines
    fields = [ln.removeprefix(f"  {path}: ").split(":")[0] for ln in lines[1:]]
    assert sorted(fields) == ["model.dtype", "sampling.temperature", f"{AGENT}.tools"]
    assert not any("more error" in ln for ln in lines)


def test_problems_found_after_the_schema_are_listed_together(write_spec) -> None:
    def three(d: dict[str, Any]) -> None:
        d["builds"]["unpatched"]["patches"] = [{"file": "absent.patch"}]
        d["executor"] = {"kind": "kubernetes"}
        d["workloads"]["swebench"]["path"] = "verified.parquet"

    path = write_spec(three)
    code, lines = validate(path)
    assert code == 2 and lines[0] == "error: 3 problems:", lines
    assert any("workloads.swebench.path: no such file or directory: " in ln for ln in lines)
    assert any("builds.unpatched.patches[0].file: file not found" in ln for ln in lines)
    assert any("executor.kind: unknown name 'kubernetes' (known: local, slurm)" in ln for ln in lines)


def test_each_problem_names_its_own_source(write_spec) -> None:
    path = write_spec()
    override = "workloads.swebench.agent.tools=[bash, shell]"
    code, lines = validate(path, "-c", "model.dtype=fp33", "-c", override)
    assert code == 2 and len(lines) == 3, lines
    assert any(ln.startswith("  model.dtype=fp33: model.dtype: ") for ln in lines)
    assert any(ln.startswith(f"  {override}: {AGENT}.tools: ") for ln in lines)
