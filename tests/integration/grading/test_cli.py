"""`specqual grade RUN_DIR` and `specqual validate-gold` end to end, with the local grader in real bwrap."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from eval.cli import app
from eval.spec.models import CohortFile
from eval.store.atomic import atomic_write_json, read_json
from eval.tasks.exclusions import read as read_exclusions
from tests.fixtures.verdicts import write_verdict

RUNNER = CliRunner()


def make_run(run: Path, local_set: Path, units: dict[str, tuple[str, str | None]]) -> None:
    """A run directory as the rollout stage leaves it: run.json, and per unit a verdict and a patch."""
    spec = CohortFile.model_validate(
        {
            "name": "g",
            "model": {"path": "/models/none"},
            "builds": {"b": {"pip": "vllm==0.32.0"}},
            "workloads": {
                "swebench": {
                    "dataset": "specqual/local",
                    "path": str(local_set),
                    "repeats": 1,
                    "sandbox": {"kind": "bwrap"},
                    "grader": {"kind": "local", "workers": 2, "timeout_s": 300},
                }
            },
        }
    )
    meta = {"schema_version": 1, "spec": spec.model_dump(mode="json"), "base_dir": str(run), "cohorts": ["c1"]}
    atomic_write_json(run / "run.json", meta)
    for instance_id, (status, patch) in units.items():
        unit = run / "c1" / "units" / instance_id / "r0"
        unit.mkdir(parents=True)
        if patch is not None:
            (unit / "patch.diff").write_text(patch)
        write_verdict(unit, status, "c1")


def grade_of(run: Path, instance_id: str) -> dict | None:
    return read_json(run / "c1" / "units" / instance_id / "r0" / "grade.json")


def test_grade_and_regrade_a_saved_run(tasks, local_set: Path, tmp_path: Path) -> None:
    by_id = {t.instance_id: t for t in tasks}
    run = tmp_path / "run"
    make_run(
        run,
        local_set,
        {
            "specqual__calc-1": ("completed", by_id["specqual__calc-1"].patch),
            "specqual__textkit-1": ("completed", ""),
            "specqual__intervals-1": ("infra_error", None),
            "specqual__stackq-1": ("completed", "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n"),
        },
    )
    result = RUNNER.invoke(app, ["grade", str(run)])
    assert result.exit_code == 0, result.output
    assert "resolved=1" in result.output and "skipped=1" in result.output
    statuses = {i: (grade_of(run, i) or {}).get("status") for i in by_id}
    assert statuses["specqual__calc-1"] == "resolved"
    assert statuses["specqual__textkit-1"] == "empty_patch"
    assert statuses["specqual__intervals-1"] is None  # infra stays infra: no grade
    assert statuses["specqual__stackq-1"] == "patch_failed"
    assert (run / "c1" / "units" / "specqual__calc-1" / "r0" / "grade" / "test_output.txt").is_file()

    first = grade_of(run, "specqual__calc-1")
    again = RUNNER.invoke(app, ["grade", str(run)])
    assert again.exit_code == 0 and "skipped=4" in again.output  # already graded: nothing re-runs
    assert grade_of(run, "specqual__calc-1") == first

    (run / "c1" / "units" / "specqual__calc-1" / "r0" / "patch.diff").write_text("")
    regraded = RUNNER.invoke(app, ["grade", str(run), "--regrade"])
    assert regraded.exit_code == 0, regraded.output
    assert (grade_of(run, "specqual__calc-1") or {}).get("status") == "empty_patch"


def test_grade_refuses_a_directory_that_is_not_a_run(tmp_path: Path) -> None:
    result = RUNNER.invoke(app, ["grade", str(tmp_path)])
    assert result.exit_code == 2
    assert "not a run directory" in result.output


def test_validate_gold_lists_a_broken_instance_with_its_reason(local_set: Path, tmp_path: Path) -> None:
    broken = tmp_path / "set"
    shutil.copytree(local_set, broken, symlinks=True)
    rows = [json.loads(line) for line in (broken / "instances.jsonl").read_text().splitlines()]
    rows[0]["patch"] = rows[0]["patch"].replace("+    return total(values) / len(values)", "+    return 0")
    (broken / "instances.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "excl.txt"
    args = ["validate-gold", str(broken), "--limit", "2", "--runs", "1", "--out", str(out), "--version", "t1"]
    result = RUNNER.invoke(app, args)
    assert result.exit_code == 0, result.output
    listed = read_exclusions(out)
    assert listed.version == "t1"
    assert list(listed.reasons) == ["specqual__calc-1"]
    assert "gold patch unresolved in 1/1 runs" in listed.reasons["specqual__calc-1"]
    assert "tests/test_stats.py::test_mean" in listed.reasons["specqual__calc-1"]
    summary = json.loads((tmp_path / "excl.logs" / "validate-gold.json").read_text())
    assert [s["empty"] for s in summary["instances"]] == [["unresolved"], ["unresolved"]]
