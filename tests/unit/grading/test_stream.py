"""The streaming grade queue and the per-unit rules (skip infra, skip graded, crash = infra)."""

from __future__ import annotations

import threading
from pathlib import Path

from eval.grading.record import read_grade
from eval.grading.stream import GradeQueue, grade_unit
from eval.protocols import GradeResult, Task
from tests.fixtures.verdicts import write_verdict


class ScriptedGrader:
    """Test double of a grader: returns a fixed result per patch text and records what it was asked."""

    def __init__(self, results: dict[str, GradeResult]) -> None:
        self.results = results
        self.calls: list[tuple[str, str, Path]] = []
        self.lock = threading.Lock()

    def grade(self, task: Task, patch: str, workdir: Path) -> GradeResult:
        with self.lock:
            self.calls.append((task.instance_id, patch, workdir))
        if patch == "crash":
            raise RuntimeError("docker went away")
        return self.results[patch]


TASK = Task("a__b-1", "a/b", "0" * 40, "", "p", "t", ["x"], [])


def unit(root: Path, name: str, status: str = "completed", patch: str | None = "fix") -> Path:
    path = root / name
    path.mkdir(parents=True)
    if patch is not None:
        (path / "patch.diff").write_text(patch)
    write_verdict(path, status, instance_id="a__b-1", repeat=0)
    return path


def test_queue_grades_every_unit_and_writes_grade_json(tmp_path: Path) -> None:
    grader = ScriptedGrader({"fix": GradeResult("resolved", True), "bad": GradeResult("unresolved", False)})
    units = [unit(tmp_path, f"r{i}", patch="fix" if i % 2 == 0 else "bad") for i in range(6)]
    with GradeQueue(grader, "local", workers=3) as queue:
        futures = [queue.submit(TASK, u) for u in units]
    assert [f.result().status for f in futures] == ["resolved", "unresolved"] * 3  # type: ignore[union-attr]
    assert [read_grade(u).status for u in units] == ["resolved", "unresolved"] * 3  # type: ignore[union-attr]
    assert {call[2] for call in grader.calls} == {u / "grade" for u in units}


def test_infra_rollouts_get_no_grade(tmp_path: Path) -> None:
    grader = ScriptedGrader({})
    path = unit(tmp_path, "r0", status="infra_error")
    assert grade_unit(grader, "local", TASK, path) is None
    assert read_grade(path) is None
    assert grader.calls == []


def test_unit_without_verdict_is_not_graded(tmp_path: Path) -> None:
    path = tmp_path / "r0"
    path.mkdir()
    (path / "patch.diff").write_text("fix")
    assert grade_unit(ScriptedGrader({}), "local", TASK, path) is None


def test_graded_units_are_skipped_unless_regrade(tmp_path: Path) -> None:
    grader = ScriptedGrader({"fix": GradeResult("resolved", True)})
    path = unit(tmp_path, "r0")
    grade_unit(grader, "local", TASK, path)
    assert grade_unit(grader, "local", TASK, path) is None
    assert len(grader.calls) == 1
    assert grade_unit(grader, "local", TASK, path, regrade=True) is not None
    assert len(grader.calls) == 2


def test_missing_patch_is_graded_as_empty_text(tmp_path: Path) -> None:
    grader = ScriptedGrader({"": GradeResult("empty_patch", False)})
    path = unit(tmp_path, "r0", patch=None)
    assert grade_unit(grader, "local", TASK, path).status == "empty_patch"  # type: ignore[union-attr]


def test_grader_crash_is_an_infra_grade(tmp_path: Path) -> None:
    path = unit(tmp_path, "r0", patch="crash")
    result = grade_unit(ScriptedGrader({}), "docker", TASK, path)
    assert result is not None and result.status == "infra_error"
    grade = read_grade(path)
    assert grade is not None and grade.resolved is None and "docker went away" in (grade.infra_reason or "")


class GatedGrader:
    """Test double of a slow grader: blocks until the test opens the gate."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.started = threading.Event()

    def grade(self, task: Task, patch: str, workdir: Path) -> GradeResult:
        self.started.set()
        assert self.gate.wait(60)
        return GradeResult("resolved", True)


def test_submit_does_not_wait_for_grading(tmp_path: Path) -> None:
    """The scheduler hands a finished unit over and goes on with its rollouts while the unit is graded."""
    grader = GatedGrader()
    queue = GradeQueue(grader, "local", workers=1)
    future = queue.submit(TASK, unit(tmp_path, "r0"))
    assert grader.started.wait(60)
    assert not future.done() and queue.pending() == 1
    assert read_grade(tmp_path / "r0") is None
    grader.gate.set()
    assert [r.status for r in queue.close() if r is not None] == ["resolved"]
    assert read_grade(tmp_path / "r0") is not None


def test_an_infra_grade_is_tried_again(tmp_path: Path) -> None:
    path = unit(tmp_path, "r0", patch="crash")
    grade_unit(ScriptedGrader({}), "docker", TASK, path)
    (path / "patch.diff").write_text("fix")
    retried = grade_unit(ScriptedGrader({"fix": GradeResult("resolved", True)}), "docker", TASK, path)
    assert retried is not None and retried.status == "resolved"
