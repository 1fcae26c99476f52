"""The SWE-bench rollouts' share of a cohort's stack session in `specqual run`: the cohort's units not yet done,
against the stack the pipeline started for it, graded as they finish.

`RolloutStage` has the shape `eval.stages.serve_each` drives (pending, starting, serve, start_failed), like
`eval.canary.run.CanaryStage`, so one stack per cohort serves both workloads.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from rich.console import Console

from eval.rollout.progress import RolloutProgress
from eval.rollout.units import plan_units
from eval.spec.load import LoadedSpec
from eval.spec.matrix import Cohort
from eval.store.run import RunDir


class RolloutStage:
    """Runs each SWE-bench cohort's remaining units on its stack; remembers cohorts whose stack did not start."""

    def __init__(self, loaded: LoadedSpec, run: RunDir, console: Console, progress: RolloutProgress) -> None:
        from eval.tasks.load import load_tasks

        workload = loaded.spec.workloads.swebench
        assert workload is not None
        self.loaded, self.run, self.console, self.progress = loaded, run, console, progress
        self.repeats = workload.repeats
        self.tasks = load_tasks(workload, loaded.spec.base_dir)
        self.failed: list[str] = []
        cohorts = [c for c in loaded.cohorts if c.runs("swebench")]
        console.print(
            f"[bold]swebench[/bold]: {len(self.tasks)} instances x {workload.repeats} repeats on "
            f"{len(cohorts)} cohorts ({', '.join(c.name for c in cohorts)})"
        )

    def pending(self, cohort: Cohort) -> bool:
        return cohort.runs("swebench") and bool(plan_units(self.run, cohort.name, self.tasks, self.repeats)[0])

    def starting(self, cohort: Cohort) -> None:
        pass

    def serve(self, cohort: Cohort, stack: Any) -> None:
        run_cohort_rollouts(self.loaded, self.run, cohort, stack, self.tasks, self.progress, self.console)

    def start_failed(self, cohort: Cohort, reason: str) -> None:
        self.failed.append(cohort.name)
        self.console.print(f"[red]{cohort.name}: {reason}; its units stay to do (resume with the same --run-id)[/red]")


def run_cohort_rollouts(
    loaded: LoadedSpec, run: RunDir, cohort: Cohort, stack: Any, tasks: list[Any], progress: Any, console: Console
) -> None:
    """Every unit of `cohort` not done yet, against `stack`, graded as each finishes (a Slurm array with
    `executor: slurm`, graded afterwards by the pipeline's grading pass)."""
    from eval.grading.factory import make_grader
    from eval.grading.stream import GradeQueue
    from eval.rollout.run import run_rollouts
    from eval.stacks.metrics import MetricsRecorder

    workload = loaded.spec.workloads.swebench
    assert workload is not None
    if loaded.spec.executor.kind == "slurm":
        from eval.executors.slurm import run_rollouts_slurm

        array = run_rollouts_slurm(loaded, run, cohort, stack.base_url)
        console.print(
            f"{cohort.name}: {array.done}/{array.units} units done, {array.unfinished} unfinished "
            f"(Slurm jobs {', '.join(array.job_ids)})"
        )
        return
    by_id = {t.instance_id: t for t in tasks}
    grader = make_grader(workload.grader, log_root=run.cohort_dir(cohort.name) / "grading")
    with GradeQueue(grader, workload.grader.kind) as grades:
        recorder = MetricsRecorder(stack.metrics_urls, run.cohort_dir(cohort.name) / "metrics.jsonl")

        def graded(unit_dir: Path) -> None:
            grades.submit(by_id[unit_dir.parent.name], unit_dir)

        with recorder.around("swebench", every_s=60):
            summary = asyncio.run(
                run_rollouts(loaded, run, cohort, stack.base_url, tasks, progress=progress, on_unit_done=graded)
            )
    console.print(
        f"{cohort.name}: {summary.completed} completed, {summary.infra_errors} infra errors, "
        f"{summary.skipped} already done ({summary.wall_s:.0f} s)"
    )
