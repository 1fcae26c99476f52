"""Grade units as their rollouts finish: a queue with N worker threads that writes each unit's grade.json.

The rollout scheduler calls `submit(task, unit_dir)` when a unit's verdict.json is written; grading overlaps
with the rollouts still running. From asyncio code: `await asyncio.wrap_future(queue.submit(task, unit_dir))`.
`grade_unit` is also what `specqual grade` runs for every unit of a saved run.
"""

from __future__ import annotations

import traceback
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from eval.grading.record import LOG_DIR, read_grade, write_grade
from eval.protocols import Grader, GradeResult, Task
from store.layout import VERDICT
from store.record_io import read_record
from store.unit_records import VerdictRecord


def grade_unit(
    grader: Grader, grader_name: str, task: Task, unit_dir: Path, regrade: bool = False
) -> GradeResult | None:
    """Grade one finished unit from its saved patch; None when there is nothing to grade.

    Skipped: no verdict yet, a rollout that ended in an infra error (infra stays infra, it gets no grade), and
    a unit already graded (unless `regrade`). A grade that is itself an infra error is tried again, as the
    harness re-runs instances that left no report. A grader that raises is an infra error of grading.
    """
    unit_dir = Path(unit_dir)
    verdict = read_record(unit_dir / VERDICT, VerdictRecord)
    if verdict is None or verdict.status == "infra_error":
        return None
    previous = read_grade(unit_dir)
    if not regrade and previous is not None and previous.status != "infra_error":
        return None
    patch_file = unit_dir / "patch.diff"
    patch = patch_file.read_text(encoding="utf-8") if patch_file.is_file() else ""
    try:
        result = grader.grade(task, patch, unit_dir / LOG_DIR)
    except Exception as e:  # any grader crash is the grading infrastructure's failure, never the model's
        detail = traceback.format_exception_only(type(e), e)[-1].strip()
        result = GradeResult("infra_error", None, infra_reason=f"grader crashed: {detail}")
    write_grade(unit_dir, result, grader_name)
    return result


class GradeQueue:
    """Grades submitted units with `workers` threads; use as a context manager (leaving waits for all)."""

    def __init__(self, grader: Grader, grader_name: str, workers: int = 4, regrade: bool = False) -> None:
        self._grader = grader
        self._name = grader_name
        self._regrade = regrade
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="grade")
        self._futures: list[Future[GradeResult | None]] = []

    def submit(self, task: Task, unit_dir: Path) -> Future[GradeResult | None]:
        future = self._pool.submit(grade_unit, self._grader, self._name, task, unit_dir, self._regrade)
        self._futures.append(future)
        return future

    def pending(self) -> int:
        return sum(1 for f in self._futures if not f.done())

    def close(self) -> list[GradeResult | None]:
        """Wait for every submitted unit; return their results in submission order."""
        self._pool.shutdown(wait=True)
        return [f.result() for f in self._futures]

    def __enter__(self) -> GradeQueue:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
