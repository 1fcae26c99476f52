"""The SWE-bench rollouts' share of a cohort's stack session in `specqual run`: the cohort's units not yet done,
against the stack the pipeline started for it, run by the executor the pipeline picked (`eval.protocols.Executor`:
here and graded as they finish, or as a Slurm job array).

`RolloutStage` has the shape `eval.stages.serve_each` drives (pending, starting, serve, start_failed), like
`eval.canary.run.CanaryStage`, so one stack per cohort serves both workloads.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console

from eval.protocols import Executor
from eval.rollout.progress import RolloutProgress
from eval.rollout.units import plan_units
from eval.spec.load import LoadedSpec
from eval.spec.matrix import Cohort
from eval.store.run import RunDir


class RolloutStage:
    """Runs each SWE-bench cohort's remaining units on its stack; remembers cohorts whose stack did not start."""

    def __init__(
        self, loaded: LoadedSpec, run: RunDir, console: Console, progress: RolloutProgress, executor: Executor
    ) -> None:
        from eval.tasks.load import load_tasks

        workload = loaded.spec.workloads.swebench
        assert workload is not None
        self.loaded, self.run, self.console, self.progress = loaded, run, console, progress
        self.executor = executor
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
        self.console.print(self.executor.rollouts(self.run, cohort, stack, self.tasks, self.progress))

    def start_failed(self, cohort: Cohort, reason: str) -> None:
        self.failed.append(cohort.name)
        self.console.print(f"[red]{cohort.name}: {reason}; its units stay to do (resume with the same --run-id)[/red]")
