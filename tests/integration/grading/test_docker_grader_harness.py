"""The docker grader around the harness's real `run_instance`, with a bwrap-backed engine double.

What is real: the harness's container workflow (apply chain, eval script, exit-code line, report.json, its
log directory and resume), the DockerGrader around it, the sandbox. What is a double: the docker engine.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from swebench.harness import run_evaluation

from eval.grading.docker import DockerGrader, harness_run_id, set_log_root
from tests.integration.grading.engine_double import BwrapEngine


@pytest.fixture
def grade(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    engines: list[BwrapEngine] = []

    def _grade(task, patch: str, name: str, run_empty: bool = False):
        engine = BwrapEngine(task)
        engines.append(engine)
        monkeypatch.setattr(run_evaluation, "cleanup_container", engine.cleanup)
        grader = DockerGrader(timeout_s=300, log_root=tmp_path / "harness", run_empty=run_empty)
        grader._client = engine  # the engine double stands in for docker.from_env()
        return grader.grade(task, patch, tmp_path / name)

    _grade.engines = engines  # type: ignore[attr-defined]
    yield _grade
    assert all(c.removed for e in engines for c in e.by_id.values())  # every container was cleaned up


def calc(tasks):
    return next(t for t in tasks if t.instance_id == "specqual__calc-1")


def test_gold_patch_resolves_through_the_harness(tasks, grade, tmp_path: Path) -> None:
    task = calc(tasks)
    result = grade(task, task.patch, "gold")
    assert result.status == "resolved", result
    assert result.tests["FAIL_TO_PASS"]["success"] == task.fail_to_pass
    for name in ("report.json", "run_instance.log", "test_output.txt", "eval.sh"):
        assert (tmp_path / "gold" / name).is_file(), name
    run_id = harness_run_id(tmp_path / "gold", task.patch)
    harness_dir = set_log_root(None) / run_id / "specqual" / task.instance_id
    assert (harness_dir / "report.json").is_file()  # the harness's own log layout, under the process's log root


def test_empty_patch_in_negative_test_mode_is_unresolved(tasks, grade) -> None:
    assert grade(calc(tasks), "", "empty").status == "empty_patch"
    result = grade(calc(tasks), "", "empty-run", run_empty=True)
    assert result.status == "unresolved"
    assert result.tests["FAIL_TO_PASS"]["failure"] == calc(tasks).fail_to_pass


def test_non_applying_patch_is_patch_failed(tasks, grade) -> None:
    task = calc(tasks)
    stale = task.patch.replace(
        "-    return total(values) / (len(values) - 1)", "-    return sum(values) / (len(values) - 1)"
    )
    result = grade(task, stale, "stale")
    assert (result.status, result.resolved) == ("patch_failed", False)


def test_harness_resume_reuses_its_report_for_the_same_patch(tasks, grade, tmp_path: Path) -> None:
    task = calc(tasks)
    assert grade(task, task.patch, "unit").status == "resolved"
    engines_before = len(grade.engines)
    again = grade(task, task.patch, "unit")
    assert again.status == "resolved"
    assert grade.engines[engines_before].by_id == {}  # no container: the harness returned its report.json
    changed = grade(task, "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n", "unit")
    assert changed.status == "patch_failed"  # a different patch is run afresh, never served a stale report
