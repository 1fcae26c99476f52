"""Progress of a job array's rollouts, for the same view (or log lines) as local rollouts: the array's tasks
write units into the shared run directory, so each poll counts the verdicts that appeared since the last one."""

from __future__ import annotations

from typing import Any

from eval.executors.slurm.rollouts import Submission
from eval.store.run import RunDir
from store.layout import VERDICT
from store.record_io import read_record
from store.unit_records import VerdictRecord


class ArrayProgress:
    """An `on_poll` callback that moves a rollout progress row (`eval.rollout.progress.CohortProgress`)."""

    def __init__(self, run: RunDir, cohort: str, ids: list[str], repeats: int, progress: Any) -> None:
        self.run, self.cohort = run, cohort
        self.left = {(i, r) for i in ids for r in range(repeats)}
        self.row = progress.cohort(cohort, total=len(self.left))
        self.refresh()
        self.row.skipped = self.row.done  # done before this session: not part of its rate

    def refresh(self) -> None:
        for instance, repeat in sorted(k for k in self.left if self.run.unit_done(self.cohort, *k)):
            self.left.discard((instance, repeat))
            self.row.done += 1
            verdict = read_record(self.run.unit_dir(self.cohort, instance, repeat) / VERDICT, VerdictRecord)
            if verdict is not None and verdict.status == "infra_error":
                self.row.infra_errors += 1

    def __call__(self, sub: Submission) -> None:
        self.refresh()
