"""Runs inside a rollout array task: the units of one shard, written into the shared run directory.

    python -m eval.executors.slurm.shard --shards <run>/<cohort>/slurm/shards-0.json --index 3

The shards file (written by `eval.executors.slurm.rollouts` before submission) names the cohort files and
overrides, the run directory, the cohort, the server's URL and, per array task, the instance ids of its shard.
The task loads the cohort file exactly as the submitter did, keeps its shard's tasks, and runs them with the
ordinary rollout runner, which skips units whose verdict.json exists: a resubmitted shard finishes only what
is left. It never touches run.json (many tasks run at once); the submitter rebuilds predictions at the end.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from eval.store.atomic import atomic_write_json

SCHEMA_VERSION = 1
DEFAULT_RUNNER = "eval.executors.slurm.shard:rollout_shard"
SECRET_OVERRIDE = "SPECQUAL_SECRET_OVERRIDE_"  # see eval.executors.slurm.rollouts.hide_secret_overrides


@dataclass
class ShardPlan:
    """One submission of a cohort's rollout array: `shards[i]` is array task i's instance ids."""

    cohort: str
    run_dir: str
    sources: list[str]
    base_url: str
    shards: list[list[str]]
    submission: int = 0
    runner: str = DEFAULT_RUNNER
    spec_hash: str | None = None  # the submitter's output hash: a task whose files changed since refuses to run
    schema_version: int = SCHEMA_VERSION
    extra: dict[str, Any] = field(default_factory=dict)

    def write(self, path: Path) -> None:
        atomic_write_json(path, asdict(self))

    @classmethod
    def read(cls, path: Path) -> ShardPlan:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        return cls(**data)


def reveal_secret_overrides(sources: list[str]) -> list[str]:
    """The submitter's sources: `$SPECQUAL_SECRET_OVERRIDE_<n>` entries come from this task's environment."""
    out = []
    for s in sources:
        name = s[1:] if s.startswith("$" + SECRET_OVERRIDE) else None
        if name is not None and name not in os.environ:
            raise SystemExit(f"shard: {name} is not in the environment (the job must inherit sbatch's)")
        out.append(os.environ[name] if name is not None else s)
    return out


def rollout_shard(plan: ShardPlan, instance_ids: list[str]) -> int:
    """The default runner: `eval.rollout.run.run_rollouts` on this shard's tasks; exit code 0 when it returns."""
    import asyncio

    from eval.rollout.run import check_workload, run_rollouts
    from eval.spec.load import load_spec
    from eval.store.run import RunDir
    from eval.tasks.load import load_tasks

    loaded = load_spec(reveal_secret_overrides(plan.sources))
    if plan.spec_hash is not None and loaded.output_hash != plan.spec_hash:
        print(
            f"shard: the cohort files changed since submission (hash {loaded.output_hash[:12]} != "
            f"{plan.spec_hash[:12]}): not running",
            file=sys.stderr,
        )
        return 2
    workload = check_workload(loaded)
    wanted = set(instance_ids)
    tasks = [t for t in load_tasks(workload, loaded.spec.base_dir) if t.instance_id in wanted]
    missing = wanted - {t.instance_id for t in tasks}
    if missing:
        print(f"shard: instances not in the workload: {sorted(missing)[:5]}", file=sys.stderr)
        return 2
    summary = asyncio.run(run_rollouts(loaded, RunDir(Path(plan.run_dir)), plan.cohort, plan.base_url, tasks))
    print(
        f"shard: {summary.total} units, {summary.skipped} already done, {summary.completed} completed, "
        f"{summary.infra_errors} infra errors, {summary.wall_s:.1f} s"
    )
    return 0


def load_runner(path: str) -> Any:
    module, _, attr = path.partition(":")
    return getattr(importlib.import_module(module), attr)


def main(args: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="shard", description="run one shard of a cohort's rollout array")
    p.add_argument("--shards", type=Path, required=True)
    p.add_argument("--index", type=int, required=True)
    ns = p.parse_args(args)
    plan = ShardPlan.read(ns.shards)
    if not 0 <= ns.index < len(plan.shards):
        p.error(f"--index {ns.index} outside 0..{len(plan.shards) - 1}")
    ids = plan.shards[ns.index]
    print(f"shard {ns.index}/{len(plan.shards)} of {plan.cohort} (submission {plan.submission}): {len(ids)} instances")
    sys.stdout.flush()
    sys.exit(load_runner(plan.runner)(plan, ids))


if __name__ == "__main__":
    main()
