"""From what the harness leaves behind to a grade: report entries, error logs, grade.json records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eval.grading import harness
from eval.grading.docker import from_harness_logs, harness_run_id
from eval.grading.record import grade_record, read_grade, write_grade
from eval.protocols import GradeResult
from tests.unit.grading.harness_task import harness_task

PATCH = "diff --git a/x b/x\n"
TESTS = {"FAIL_TO_PASS": {"success": ["a"], "failure": []}, "PASS_TO_PASS": {"success": [], "failure": []}}


def entry(**fields: object) -> dict[str, object]:
    base = {"patch_is_None": False, "patch_exists": True, "patch_successfully_applied": True, "resolved": False}
    return {**base, **fields}


def test_report_entries_map_to_statuses() -> None:
    assert harness.to_result(entry(resolved=True, tests_status=TESTS), PATCH).status == "resolved"
    assert harness.to_result(entry(resolved=True, tests_status=TESTS), PATCH).tests == TESTS
    assert harness.to_result(entry(), PATCH).status == "unresolved"
    assert harness.to_result(entry(patch_exists=False), None).status == "empty_patch"


def test_environment_failure_flag_is_infra_not_unresolved() -> None:
    flagged = entry(patch_successfully_applied=False, infra_failure=True, infra_failure_reason="out_of_memory")
    result = harness.to_result(flagged, PATCH)
    assert result.status == "infra_error"
    assert result.resolved is None
    assert result.infra_reason is not None and "out_of_memory" in result.infra_reason


@pytest.fixture
def task():
    return harness_task("psf__requests-2317", "psf/requests", "parse_log_requests", ["a"], [])


def test_harness_report_is_read(tmp_path: Path, task) -> None:
    (tmp_path / "report.json").write_text(json.dumps({task.instance_id: entry(resolved=True)}))
    assert from_harness_logs(task, PATCH, tmp_path).status == "resolved"


def test_patch_apply_failure_is_patch_failed(tmp_path: Path, task) -> None:
    (tmp_path / "run_instance.log").write_text(
        "Failed to apply patch to container: git apply --verbose\n"
        ">>>>> Patch Apply Failed:\nerror: patch failed: a.py:3\n"
    )
    result = from_harness_logs(task, PATCH, tmp_path)
    assert (result.status, result.resolved) == ("patch_failed", False)


def test_harness_errors_are_infra(tmp_path: Path, task) -> None:
    (tmp_path / "run_instance.log").write_text(
        "Error creating container for psf__requests-2317: Image swebench/x:latest not found for psf__requests-2317\n"
    )
    result = from_harness_logs(task, PATCH, tmp_path)
    assert result.status == "infra_error"
    assert result.infra_reason is not None and "not found" in result.infra_reason
    (tmp_path / "run_instance.log").write_text("Test timed out after 1800 seconds.\n")
    assert "timed out" in str(from_harness_logs(task, PATCH, tmp_path).infra_reason)


def test_no_logs_at_all_is_infra(tmp_path: Path, task) -> None:
    assert from_harness_logs(task, PATCH, tmp_path).status == "infra_error"


def test_harness_run_id_is_stable_and_container_safe(tmp_path: Path) -> None:
    a = harness_run_id(tmp_path / "c" / "units" / "x" / "r0")
    assert a == harness_run_id(tmp_path / "c" / "units" / "x" / "r0")
    assert a != harness_run_id(tmp_path / "c" / "units" / "x" / "r1")
    assert all(ch.isalnum() or ch in "-_." for ch in a)


def test_grade_record_schema(tmp_path: Path) -> None:
    record = write_grade(tmp_path, GradeResult("unresolved", False, tests=TESTS), "local")
    assert read_grade(tmp_path) == record
    written = json.loads((tmp_path / "grade.json").read_text())
    assert set(written) == {"schema_version", "grader", "status", "resolved", "infra_reason", "tests", "graded_at"}
    assert written["schema_version"] == 1 and written["tests"] == TESTS
    infra = grade_record(GradeResult("infra_error", False, infra_reason="engine down"), "docker")
    assert infra.resolved is None
    with pytest.raises(ValueError):
        grade_record(GradeResult("maybe", None), "local")
