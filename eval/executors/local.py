"""The local executor: a cohort's stack as processes (or docker containers) on this host, its rollouts run here
by the async scheduler and graded as each unit finishes."""

from __future__ import annotations

import asyncio
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from eval.protocols import Stack, Task
from eval.spec.load import LoadedSpec
from eval.spec.matrix import Cohort
from eval.stacks.builds import BuildEnv
from eval.store.run import RunDir


class LocalExecutor:
    """`executor.kind: local` (see `eval.protocols.Executor`)."""

    def __init__(self, loaded: LoadedSpec) -> None:
        self.loaded = loaded

    def stack(self, cohort: Cohort, model_path: str | Path, run_dir: Path | None, build: BuildEnv) -> Stack:
        from eval.stacks.launch import launch

        stack: Stack = launch(self.loaded.spec, cohort, model_path, run_dir, build)
        return stack

    def rollouts(
        self, run: RunDir, cohort: Cohort, stack: Stack, tasks: list[Task], progress: Any, early_stop: bool = False
    ) -> str:
        """The scheduler runs the units here; a grading queue grades each as it finishes; with `early_stop`, the
        stopper asks the sequential test every `policy.early_stop_every` finished units."""
        from eval.grading.factory import make_grader
        from eval.grading.stream import GradeQueue
        from eval.rollout.run import run_rollouts
        from eval.rollout.stopper import EarlyStop
        from eval.stacks.metrics import MetricsRecorder

        workload = self.loaded.spec.workloads.swebench
        assert workload is not None
        by_id = {t.instance_id: t for t in tasks}
        grades: Any = nullcontext()  # grade_during_run false: `specqual grade` grades the run later
        if workload.grade_during_run:
            grader = make_grader(workload.grader, log_root=run.cohort_dir(cohort.name) / "grading")
            grades = GradeQueue(grader, workload.grader.kind)
        with grades:
            recorder = MetricsRecorder(stack.metrics_urls, run.cohort_dir(cohort.name) / "metrics.jsonl")

            def submit(unit_dir: Path) -> None:
                grades.submit(by_id[unit_dir.parent.name], unit_dir)

            graded = submit if workload.grade_during_run else None

            every = self.loaded.spec.policy.early_stop_every
            stop = EarlyStop(run.path, cohort.name, every_units=every) if early_stop else None

            with recorder.around("swebench", every_s=60):
                counts = asyncio.run(
                    run_rollouts(self.loaded, run, cohort, stack.base_url, tasks, progress, graded, early_stop=stop)
                )
        stopped = ""
        if counts.stopped_early:
            stopped = f"; stopped early ({counts.not_run} units not run): {counts.stopped_early}"
        return (
            f"{cohort.name}: {counts.completed} completed, {counts.infra_errors} infra errors, "
            f"{counts.skipped} already done ({counts.wall_s:.0f} s){stopped}"
        )

    def scripts(self, cohort: Cohort, model_path: str, instances: int | None) -> list[str]:
        return []
