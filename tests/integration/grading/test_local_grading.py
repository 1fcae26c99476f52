"""Local grading in real bwrap through the harness's parsers and resolution rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from eval.grading.local import LocalGrader
from tests.integration.grading.conftest import edited_patch

GRADER = LocalGrader(timeout_s=300, memory_gb=4)


def calc(tasks):
    return next(t for t in tasks if t.instance_id == "specqual__calc-1")


def test_gold_patches_resolve_every_instance(tasks, tmp_path: Path) -> None:
    results = {t.instance_id: GRADER.grade(t, t.patch, tmp_path / t.instance_id) for t in tasks}
    assert {i: r.status for i, r in results.items()} == {t.instance_id: "resolved" for t in tasks}
    for task in tasks:
        tests = results[task.instance_id].tests
        assert tests["FAIL_TO_PASS"]["success"] == task.fail_to_pass
        assert tests["PASS_TO_PASS"]["success"] == task.pass_to_pass
        assert (tmp_path / task.instance_id / "test_output.txt").is_file()


def test_empty_patches_resolve_none(tasks, tmp_path: Path) -> None:
    assert {GRADER.grade(t, "", tmp_path / t.instance_id).status for t in tasks} == {"empty_patch"}
    # and with the tests actually run on the base commit (as validate-gold does), every instance is unresolved
    run_empty = LocalGrader(timeout_s=300, memory_gb=4, run_empty=True)
    for task in tasks:
        result = run_empty.grade(task, "", tmp_path / f"{task.instance_id}-run")
        assert result.status == "unresolved", task.instance_id
        assert result.tests["FAIL_TO_PASS"]["failure"] == task.fail_to_pass
        assert result.tests["PASS_TO_PASS"]["failure"] == []


def test_patch_breaking_a_pass_to_pass_test_is_unresolved(tasks, tmp_path: Path) -> None:
    task = calc(tasks)
    fix = ("calc/stats.py", "return total(values) / (len(values) - 1)", "return total(values) / len(values)")
    breaker = ("calc/stats.py", "        if value > best:", "        if value < best:")
    repo = Path(task.raw["specqual_repo_path"])
    assert GRADER.grade(task, edited_patch(repo, tmp_path, [fix]), tmp_path / "fix").status == "resolved"
    result = GRADER.grade(task, edited_patch(repo, tmp_path, [fix, breaker]), tmp_path / "both")
    assert result.status == "unresolved"
    assert result.tests["FAIL_TO_PASS"]["failure"] == []
    assert result.tests["PASS_TO_PASS"]["failure"] == ["tests/test_stats.py::test_maximum"]


def test_patch_that_does_not_apply_is_patch_failed(tasks, tmp_path: Path) -> None:
    task = calc(tasks)
    # the line the patch removes is not in the file (the harness's chain even tries `patch --fuzz=5`)
    stale = task.patch.replace(
        "-    return total(values) / (len(values) - 1)", "-    return sum(values) / (len(values) - 1)"
    )
    assert stale != task.patch
    result = GRADER.grade(task, stale, tmp_path / "g")
    assert (result.status, result.resolved) == ("patch_failed", False)
    assert ">>>>> Patch Apply Failed" in (tmp_path / "g" / "run_instance.log").read_text()


@pytest.mark.parametrize("garbage", ["not a patch at all\n", "diff --git a/nope.py b/nope.py\n--- a/nope.py\n"])
def test_garbage_patch_is_patch_failed(tasks, tmp_path: Path, garbage: str) -> None:
    assert GRADER.grade(calc(tasks), garbage, tmp_path / "g").status == "patch_failed"


def test_test_time_limit_is_infra(tasks, tmp_path: Path) -> None:
    task = calc(tasks)
    hang = edited_patch(
        Path(task.raw["specqual_repo_path"]),
        tmp_path,
        [("calc/stats.py", "def total(values):\n", "def total(values):\n    import time; time.sleep(600)\n")],
    )
    result = LocalGrader(timeout_s=5, memory_gb=4).grade(task, hang, tmp_path / "g")
    assert result.status == "infra_error"
    assert result.resolved is None
    assert "timed out" in str(result.infra_reason)


def test_python_without_pytest_is_infra(tasks, tmp_path: Path) -> None:
    """Tests that cannot run for want of pytest are the environment's failure, not an unresolved patch."""
    import subprocess
    import sys

    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "venv")], check=True)
    grader = LocalGrader(timeout_s=300, python=str(tmp_path / "venv" / "bin" / "python"))
    result = grader.grade(calc(tasks), calc(tasks).patch, tmp_path / "g")
    assert result.status == "infra_error"
    assert "pytest is not installed" in str(result.infra_reason)
