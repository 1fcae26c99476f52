"""The Slurm executor: a cohort's stack as a Slurm job and its rollouts as a job array, on a shared file system.

`SlurmExecutor` (`executor.kind: slurm`, see `eval.protocols.Executor`):

- `stack(cohort, model_path, run_dir, build)` -> `SlurmStack`: entering it submits the stack job and waits until
  every process answers; leaving `scancel`s it. `stack.base_url` is the server's (or router's) URL on its node.
- `rollouts(run, cohort, stack, tasks, progress)`: submits the cohort's units as a job array of shards, watches
  it, resubmits shards that left units unfinished (only those units); graded afterwards by the pipeline's
  grading pass.
- `scripts(cohort, model_path, instances)`: the sbatch scripts `specqual plan` prints.

Job ids go to `<run>/<cohort>/slurm.json`; `specqual status RUN_DIR` reads it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from eval.executors.slurm.stack import SlurmStack
    from eval.protocols import Stack, Task
    from eval.spec.load import LoadedSpec
    from eval.spec.matrix import Cohort
    from eval.stacks.builds import BuildEnv
    from eval.store.run import RunDir


class SlurmExecutor:
    """`executor.kind: slurm`: stacks as jobs, rollouts as arrays (options under `executor.slurm`)."""

    def __init__(self, loaded: LoadedSpec) -> None:
        self.loaded = loaded

    def stack(self, cohort: Cohort, model_path: str | Path, run_dir: Path | None, build: BuildEnv) -> SlurmStack:
        """The cohort's stack job, not submitted until entered (logs and stack.json under `<run_dir>/<cohort>/`)."""
        from eval.executors.slurm.plan import stack_job
        from eval.executors.slurm.stack import SlurmStack
        from eval.stacks.launch import cohort_dir

        spec = self.loaded.spec
        job = stack_job(spec, cohort, str(model_path), cohort_dir(run_dir, cohort.name), build)
        poll = min(2.0, spec.executor.slurm.poll_interval_s)
        return SlurmStack(job, build, startup_timeout_s=spec.server.startup_timeout_s, poll_s=poll)

    def rollouts(
        self, run: RunDir, cohort: Cohort, stack: Stack, tasks: list[Task], progress: Any, early_stop: bool = False
    ) -> str:
        """The units as a job array against the stack's URL (the tasks load them again from the cohort files).

        With `early_stop`, the array is cancelled once the comparison is decided (eval.executors.slurm.rollouts)."""
        from eval.executors.slurm.rollouts import run_array
        from eval.rollout.stopper import EarlyStop

        stop = EarlyStop(run.path, cohort.name, every_s=30.0) if early_stop else None
        poll = self._progress(run, cohort, tasks, progress)
        array = run_array(self.loaded, run, cohort, stack.base_url, on_poll=poll, early_stop=stop)
        stopped = f"; stopped early: {stop.record.reason}" if stop is not None and stop.record else ""
        return (
            f"{cohort.name}: {array.done}/{array.units} units done, {array.unfinished} unfinished "
            f"(Slurm jobs {', '.join(array.job_ids)}){stopped}"
        )

    def _progress(self, run: RunDir, cohort: Cohort, tasks: list[Task], progress: Any) -> Any:
        """The array's units into the rollout progress view (or log lines), counted at each poll."""
        from eval.executors.slurm.progress import ArrayProgress

        workload = self.loaded.spec.workloads.swebench
        if progress is None or workload is None:
            return None
        return ArrayProgress(run, cohort.name, [t.instance_id for t in tasks], workload.repeats, progress)

    def scripts(self, cohort: Cohort, model_path: str, instances: int | None) -> list[str]:
        from eval.executors.slurm.plan import plan_scripts

        return plan_scripts(self.loaded.spec, cohort, model_path, instances)
