"""A grading run that did not finish is an infra error, never a grade: the real test output of the local grader
for the local set's `specqual__calc-1` (gold patch, resolved), and the same output cut where a killed sandbox
cuts it (at the pytest command line: no end-of-output marker, the harness parses `tests: {}`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from eval.grading import harness
from eval.grading.record import grade_record
from eval.protocols import GradeResult, Task
from tests.unit.grading.harness_task import LOGS

FULL = LOGS / "specqual__calc-1.pass.txt"  # written by LocalGrader (bwrap) for the gold patch
PYTEST_LINE = "+ python -m pytest -rA -p no:cacheprovider tests/test_stats.py\n"


def calc(tasks: list[Task]) -> Task:
    return next(t for t in tasks if t.instance_id == "specqual__calc-1")


def cut(tmp_path: Path, after: str) -> Path:
    text = FULL.read_text()
    path = tmp_path / "test_output.txt"
    path.write_text(text[: text.index(after) + len(after)])
    return path


def grade(task: Task, log: Path) -> GradeResult:
    return harness.to_result(harness.eval_report(task, task.patch, log), task.patch, log)


def test_the_finished_output_grades_resolved(tasks: list[Task]) -> None:
    result = grade(calc(tasks), FULL)
    assert (result.status, result.resolved) == ("resolved", True)
    assert harness.unfinished(FULL.read_text()) is None


def test_output_cut_at_the_pytest_line_is_infra_not_unresolved(tasks: list[Task], tmp_path: Path) -> None:
    log = cut(tmp_path, PYTEST_LINE)
    entry = harness.eval_report(calc(tasks), calc(tasks).patch, log)
    assert not entry["patch_successfully_applied"] and "tests_status" not in entry  # what read as unresolved
    result = grade(calc(tasks), log)
    assert (result.status, result.resolved, result.tests) == ("infra_error", None, {})
    assert result.infra_reason is not None and "end-of-output marker" in result.infra_reason
    assert grade_record(result, "local").resolved is None


@pytest.mark.parametrize(
    ("after", "why"),
    [
        ("Applied patch tests/test_stats.py cleanly.\n", "start-of-output marker"),  # killed before the tests
        ("5 passed in 0.04s ===============================\n", "end-of-output marker"),  # killed after pytest
    ],
)
def test_every_cut_before_the_end_marker_is_infra(tasks: list[Task], tmp_path: Path, after: str, why: str) -> None:
    result = grade(calc(tasks), cut(tmp_path, after))
    assert result.status == "infra_error" and why in str(result.infra_reason)


def test_timed_out_and_errored_markers_are_infra() -> None:
    text = FULL.read_text()
    assert "timed out" in str(harness.unfinished(text + "\n>>>>> Tests Timed Out\n"))
    assert "errored" in str(harness.unfinished(text + "\n>>>>> Tests Errored\n"))
