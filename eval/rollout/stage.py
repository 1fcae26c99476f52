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
from eval.rollout.stopper import RECORD
from eval.rollout.units import infra_units, plan_units
from eval.spec.load import LoadedSpec
from eval.spec.matrix import Cohort
from eval.store.run import RunDir


class RolloutStage:
    """Runs each SWE-bench cohort's remaining units on its stack; remembers cohorts whose stack did not start."""

    def __init__(
        self,
        loaded: LoadedSpec,
        run: RunDir,
        console: Console,
        progress: RolloutProgress,
        executor: Executor,
        early_stop: bool = True,
    ) -> None:
        from eval.rollout.stopper import write_order
        from eval.tasks.load import load_tasks

        workload = loaded.spec.workloads.swebench
        assert workload is not None
        self.loaded, self.run, self.console, self.progress = loaded, run, console, progress
        self.executor = executor
        self.repeats = workload.repeats
        self.tasks = load_tasks(workload, loaded.spec.base_dir)
        self.failed: list[str] = []
        cohorts = [c for c in loaded.cohorts if c.runs("swebench")]
        self.early_stop = early_stop and loaded.spec.policy.early_stop
        if self.early_stop:  # the order the scheduler and the sequential test share (store.order)
            write_order(run.path, [t.instance_id for t in self.tasks])
        console.print(
            f"[bold]swebench[/bold]: {len(self.tasks)} instances x {workload.repeats} repeats on "
            f"{len(cohorts)} cohorts ({', '.join(c.name for c in cohorts)})"
        )

    def pending(self, cohort: Cohort) -> bool:
        """Units left to run, unless an earlier (resumed) run stopped the cohort early: its stack is not started
        again for a decision already taken (`--no-early-stop` runs the rest), except to re-run its infra errors."""
        if self.early_stop and (self.run.cohort_dir(cohort.name) / RECORD).is_file():
            # decided: only units that ended in an infra error are left to run (eval.rollout.run)
            return cohort.runs("swebench") and bool(infra_units(self.run, cohort.name, self.tasks, self.repeats))
        return cohort.runs("swebench") and bool(plan_units(self.run, cohort.name, self.tasks, self.repeats)[0])

    def starting(self, cohort: Cohort) -> None:
        pass

    def serve(self, cohort: Cohort, stack: Any) -> None:
        # Only a compared cohort stops early; a control must run every instance for the cohorts compared with it.
        is_control = any(c.control == cohort.name for c in self.loaded.cohorts)
        stop = self.early_stop and cohort.control is not None and not is_control
        self.console.print(self.executor.rollouts(self.run, cohort, stack, self.tasks, self.progress, early_stop=stop))

    def start_failed(self, cohort: Cohort, reason: str) -> None:
        self.failed.append(cohort.name)
        self.console.print(f"[red]{cohort.name}: {reason}; its units stay to do (resume with the same --run-id)[/red]")
