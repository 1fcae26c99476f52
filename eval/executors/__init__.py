"""Executors: where a cohort file's stacks and rollouts run (`executor.kind`): local processes or Slurm jobs.

A command picks its executor once (`pick(loaded)`, through `eval.registry.EXECUTORS`) and passes it down; the
stages below use the `eval.protocols.Executor` shape and never ask which one it is. `stacks(...)` turns an
executor into the per-cohort stack factory that `eval.stages.serve_each` drives.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from eval.protocols import Executor, Stack
    from eval.spec.load import LoadedSpec
    from eval.spec.matrix import Cohort


def pick(loaded: LoadedSpec) -> Executor:
    """The executor the cohort file names (`executor.kind`, checked against the registry at load time)."""
    from eval.registry import EXECUTORS, load

    executor: Executor = load(EXECUTORS, loaded.spec.executor.kind)(loaded)
    return executor


def stacks(
    executor: Executor, loaded: LoadedSpec, run_dir: Path | None, models: Mapping[str, Path] | Path
) -> Callable[[Cohort], Stack]:
    """cohort -> its stack on `executor` (build made or reused first); `models` maps model names to directories
    (one path: every cohort's)."""
    from eval.stacks import ensure_build

    def factory(cohort: Cohort) -> Stack:
        model = models if isinstance(models, Path) else models[cohort.model_name]
        return executor.stack(cohort, model, run_dir, ensure_build(loaded.spec, cohort.factors["build"]))

    return factory
