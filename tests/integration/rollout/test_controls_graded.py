"""The control agents through `specqual rollout --grade`: gold resolves every local task, empty none."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from eval.cli import app
from tests.integration.rollout.conftest import swebench_overrides

REPO = Path(__file__).resolve().parents[3]
COHORT = REPO / "cohorts" / "smollm2-cpu.yaml"


def grades(cohort_dir: Path) -> dict[tuple[str, str], dict]:
    return {(p.parts[-3], p.parts[-2]): json.loads(p.read_text()) for p in cohort_dir.glob("units/*/r*/grade.json")}


@pytest.mark.parametrize(("kind", "expected"), [("gold", "resolved"), ("empty", "empty_patch")])
def test_control_agents_validate_environment_and_grader(kind, expected, task_dir, tmp_path):
    argv = ["rollout", str(COHORT), "--cohort", "stock-off", "--base-url", "http://127.0.0.1:9"]
    overrides = [x for o in swebench_overrides(task_dir, kind=kind) for x in ("-c", o)]
    result = CliRunner().invoke(app, [*argv, *overrides, "--run-id", kind, "--results", str(tmp_path), "--grade"])
    assert result.exit_code == 0, result.output
    cohort_dir = tmp_path / kind / "stock-off"
    found = grades(cohort_dir)
    assert len(found) == 12  # 6 local tasks x 2 repeats, each graded once
    assert {g["status"] for g in found.values()} == {expected}
    assert all(g["resolved"] is (kind == "gold") for g in found.values())
    predictions = (cohort_dir / "predictions.jsonl").read_text().splitlines()
    assert len(predictions) == 12
    assert all(bool(json.loads(p)["model_patch"]) is (kind == "gold") for p in predictions)
    assert f"graded 12 {expected}" in result.output
