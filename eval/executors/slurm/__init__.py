"""Slurm executor: a cohort's stack as a Slurm job and its rollouts as a job array, on a shared file system.

Entry points for the pipeline (`executor.kind: slurm`):

- `launch_stack(loaded, cohort, run, build_env, model_path)`, or
  `launch(spec, cohort, model_path, run_dir, build_env)` -> `SlurmStack`: the latter has the arguments of
  `eval.stacks.launch.launch`; `with launch(...) as stack:` submits the stack job, waits until every process
  answers, and `scancel`s it on exit. `stack.base_url` is the server's (or router's) URL on its node.
- `run_rollouts_slurm(loaded, run, cohort, base_url)` -> `RolloutSummary`: submits the cohort's units as a job
  array of shards, watches it, resubmits shards that left units unfinished (only those units), returns counts.
- `plan_scripts(loaded, cohort)` -> the sbatch scripts `specqual plan` prints.

Job ids go to `<run>/<cohort>/slurm.json`; `specqual status RUN_DIR` reads it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from eval.executors.slurm.rollouts import RolloutSummary
    from eval.executors.slurm.stack import SlurmStack
    from eval.spec.load import LoadedSpec
    from eval.spec.matrix import Cohort
    from eval.spec.models import CohortFile
    from eval.stacks.builds import BuildEnv
    from eval.store.run import RunDir


def launch(
    spec: CohortFile,
    cohort: Cohort | str,
    model_path: str | Path,
    run_dir: Path | None,
    build_env: BuildEnv,
    *,
    startup_timeout_s: float | None = None,
    extra_env: dict[str, str] | None = None,
) -> SlurmStack:
    """The cohort's stack as a Slurm job, not submitted yet (the context manager submits and waits)."""
    from eval.executors.slurm.plan import stack_job
    from eval.executors.slurm.stack import SlurmStack
    from eval.stacks.launch import cohort_dir, find_cohort

    c = find_cohort(spec, cohort)
    job = stack_job(spec, c, str(model_path), cohort_dir(run_dir, c.name), build_env, extra_env)
    timeout = startup_timeout_s or spec.server.startup_timeout_s
    return SlurmStack(job, build_env, startup_timeout_s=timeout, poll_s=min(2.0, spec.executor.slurm.poll_interval_s))


def launch_stack(
    loaded: LoadedSpec, cohort: Cohort, run: RunDir | None, build_env: BuildEnv, model_path: str | Path
) -> SlurmStack:
    """`launch` for the pipeline: the cohort's stack job under `<run>/<cohort>/` (not submitted until entered)."""
    return launch(loaded.spec, cohort, model_path, run.path if run is not None else None, build_env)


def run_rollouts_slurm(loaded: LoadedSpec, run: RunDir, cohort: Cohort, base_url: str, **kwargs: Any) -> RolloutSummary:
    """Run the cohort's SWE-bench units as a Slurm job array against `base_url`; see `rollouts.run_array`."""
    from eval.executors.slurm.rollouts import run_array

    return run_array(loaded, run, cohort, base_url, **kwargs)


def plan_scripts(loaded: LoadedSpec, cohort: Cohort) -> list[str]:
    """The sbatch scripts of a cohort (stack, rollout array) as `specqual plan` prints them."""
    from eval.executors.slurm.plan import plan_scripts as scripts

    return scripts(loaded, cohort)


def plan_sbatch(loaded: LoadedSpec, cohort: Cohort) -> list[str]:
    """`plan_scripts` when the cohort file's executor is slurm, else [] (for the plan dict)."""
    return plan_scripts(loaded, cohort) if loaded.spec.executor.kind == "slurm" else []
