"""Build the stack job and rollout array of a cohort from its cohort file (for `SlurmExecutor.stack` and
`specqual plan`)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from eval.executors.slurm.scripts import RolloutArray, StackJob, rollout_script, stack_script
from eval.spec.matrix import Cohort
from eval.spec.models import CohortFile
from eval.stacks.builds import BuildEnv
from eval.stacks.commands import ProcessCommand, cohort_commands

MAX_DEFAULT_SHARDS = 100


def _resolve_router(commands: list[ProcessCommand], build: BuildEnv | None) -> list[ProcessCommand]:
    """Put the `vllm-router` executable's full path into the router's command line (found from this host)."""
    if build is None:
        return commands
    from eval.stacks.router import router_argv

    out = []
    for c in commands:
        if c.role == "router":
            c = ProcessCommand(c.role, c.index, router_argv(list(c.argv), build), dict(c.env), c.gpus)
        out.append(c)
    return out


def stack_job(
    spec: CohortFile,
    cohort: Cohort,
    model_path: str,
    cohort_dir: Path,
    build: BuildEnv | None,
    extra_env: dict[str, str] | None = None,
) -> StackJob:
    """The stack job of a cohort; without a build (plans) the interpreter is shown as a stand-in."""
    from eval.stacks.launch import device_env

    env = {**device_env(spec), **(extra_env or {})}
    if build is not None:
        env.update(build.launch_env({**os.environ, **env}))  # a cohort's PYTHONPATH stays, after the overlay
    python = str(build.python) if build is not None and build.python else f"<python of build {cohort.factors['build']}>"
    return StackJob(
        cohort=cohort.name,
        commands=_resolve_router(cohort_commands(spec, cohort, model_path), build),
        options=spec.executor.slurm,
        cohort_dir=cohort_dir,
        python=python,
        specqual_python=sys.executable,
        device=spec.server.device,
        env=env,
        bind=spec.executor.slurm.bind_host,
    )


def default_shards(spec: CohortFile, instances: int) -> int:
    wanted = spec.executor.slurm.shards or min(instances, MAX_DEFAULT_SHARDS)
    return max(1, min(wanted, instances))


def plan_scripts(spec: CohortFile, cohort: Cohort, model_path: str, instances: int | None) -> list[str]:
    """The sbatch scripts of a cohort as a dry run: paths under `<run>/`; `instances` is the plan's count of the
    cohort's SWE-bench instances (None: not known offline, 0: no rollouts)."""
    cdir = Path("<run>") / cohort.name
    scripts = [stack_script(stack_job(spec, cohort, model_path, cdir, None))]
    if instances is None:
        instances = spec.executor.slurm.shards or MAX_DEFAULT_SHARDS  # decided at submission from the tasks
    if instances:
        array = RolloutArray(
            cohort=cohort.name,
            options=spec.executor.slurm,
            cohort_dir=cdir,
            shards_file=cdir / "slurm" / "shards-0.json",
            tasks=default_shards(spec, instances),
            specqual_python=sys.executable,
            workdir=Path.cwd(),
        )
        scripts.append(rollout_script(array))
    return scripts
