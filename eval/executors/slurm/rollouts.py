"""A cohort's rollouts as a Slurm job array: shards of instances, watched, resubmitted until every unit is done.

Submission 0 splits the selected instances into `executor.slurm.shards` contiguous shards (default: one per
instance, at most 100), one array task each. When the array has ended, every shard that still has units
without a verdict (its task failed, was cancelled, preempted or timed out) is submitted again, narrowed to
the instances with unfinished units; the rollout runner skips the units already done, so a resubmission
finishes only those. At most `executor.slurm.resubmits` resubmissions. Infra failures inside a unit are the
runner's business (verdict status `infra_error`): they are done units here.

With an `early_stop` (eval.rollout.stopper), the instances are sharded in the shared seeded order (array tasks
start in index order, so complete instances accumulate from the front of it), the stopper is asked at every
poll (at most every `every_s` seconds), and once the comparison is decided the array is cancelled (pending
shards never start, running ones stop) and nothing is resubmitted.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eval.executors.slurm import cluster
from eval.executors.slurm.plan import default_shards
from eval.executors.slurm.record import upsert_job
from eval.executors.slurm.scripts import RolloutArray, rollout_script
from eval.executors.slurm.shard import DEFAULT_RUNNER, SECRET_OVERRIDE, ShardPlan
from eval.rollout.stopper import EarlyStop
from eval.spec.load import LoadedSpec, is_override
from eval.spec.matrix import Cohort
from eval.store.atomic import atomic_write_text
from eval.store.run import RunDir, redact_source
from store.order import ordered


@dataclass
class Submission:
    job_id: str
    shards: list[list[str]]
    number: int = 0
    task_states: dict[int, str] = field(default_factory=dict)


@dataclass
class ArrayResult:
    cohort: str
    units: int
    done: int
    unfinished: int
    submissions: list[Submission]

    @property
    def job_ids(self) -> list[str]:
        return [s.job_id for s in self.submissions]


def split(ids: list[str], n: int) -> list[list[str]]:
    """`ids` in order, cut into `n` contiguous shards whose sizes differ by at most one (none empty)."""
    n = max(1, min(n, len(ids)))
    base, extra = divmod(len(ids), n)
    out, start = [], 0
    for i in range(n):
        size = base + (1 if i < extra else 0)
        out.append(ids[start : start + size])
        start += size
    return out


def unfinished(run: RunDir, cohort: str, ids: list[str], repeats: int) -> list[str]:
    """Instances (in order) with at least one unit whose verdict.json does not parse yet."""
    return [i for i in ids if not all(run.unit_done(cohort, i, r) for r in range(repeats))]


def absolute_sources(sources: list[str]) -> list[str]:
    """Cohort files as absolute paths (array tasks may start elsewhere); overrides unchanged."""
    return [s if is_override(s) else str(Path(s).resolve()) for s in sources]


def hide_secret_overrides(sources: list[str]) -> tuple[list[str], dict[str, str]]:
    """Sources for the shards file, each override with a secret (`server.env.HF_TOKEN=...`) replaced by
    `$SPECQUAL_SECRET_OVERRIDE_<n>`, and those variables: `sbatch` passes them to the tasks in their environment,
    and `eval.executors.slurm.shard` puts the overrides back (see `reveal_secret_overrides`)."""
    shown: list[str] = []
    env: dict[str, str] = {}
    for s in sources:
        if is_override(s) and redact_source(s) != s:
            name = f"{SECRET_OVERRIDE}{len(env)}"
            env[name] = s
            shown.append("$" + name)
        else:
            shown.append(s)
    return shown, env


@dataclass(frozen=True)
class Runner:
    """What array tasks run per shard: an import path `module:function(plan, instance_ids) -> exit code`."""

    path: str = DEFAULT_RUNNER
    extra: dict[str, Any] = field(default_factory=dict)


def submit_array(
    loaded: LoadedSpec, run: RunDir, cohort: str, base_url: str, shards: list[list[str]], number: int, runner: Runner
) -> Submission:
    cdir = run.cohort_dir(cohort)
    shards_file = cdir / "slurm" / f"shards-{number}.json"
    sources, secrets = hide_secret_overrides(absolute_sources(loaded.sources))
    plan = ShardPlan(cohort, str(run.path.resolve()), sources, base_url, shards, number, runner.path)
    plan.spec_hash, plan.extra = loaded.output_hash, runner.extra
    plan.write(shards_file)
    options = loaded.spec.executor.slurm
    array = RolloutArray(
        cohort, options, cdir.resolve(), shards_file.resolve(), len(shards), sys.executable, Path.cwd()
    )
    script = cdir / "slurm" / f"rollout-{number}.sbatch"
    atomic_write_text(script, rollout_script(array))
    (cdir / "logs").mkdir(parents=True, exist_ok=True)
    job_id = cluster.submit(script, env=secrets)  # secret overrides: in the tasks' environment, not in files
    upsert_job(cdir, job_id, kind="rollout", submission=number, tasks=len(shards), script=str(script))
    upsert_job(cdir, job_id, shards_file=str(shards_file), state="PENDING")
    return Submission(job_id, shards, number)


def task_states(job_id: str) -> tuple[dict[int, str], bool]:
    """(array task -> state, whether any task is still active) from `scontrol show job`."""
    states: dict[int, str] = {}
    active = False
    for info in cluster.show_jobs(job_id):
        active = active or info.active
        for i in info.task_ids:
            states[i] = info.state
    return states, active


OnPoll = Callable[[Submission], None]


def watch(run: RunDir, cohort: str, sub: Submission, poll_s: float, on_poll: OnPoll | None) -> None:
    """Poll until no task of the array is active; record task states in slurm.json as they change."""
    seen: dict[int, str] = {}
    while True:
        states, active = task_states(sub.job_id)
        sub.task_states.update(states)  # accumulated: Slurm forgets finished tasks after MinJobAge
        if sub.task_states != seen or not active:
            seen = dict(sub.task_states)
            tasks = {str(k): v for k, v in sorted(seen.items())}
            upsert_job(run.cohort_dir(cohort), sub.job_id, state="ACTIVE" if active else "ENDED", task_states=tasks)
        if on_poll is not None:
            on_poll(sub)
        if not active:
            return
        time.sleep(poll_s)


def run_array(
    loaded: LoadedSpec,
    run: RunDir,
    cohort: Cohort | str,
    base_url: str,
    *,
    runner: Runner | None = None,
    on_poll: OnPoll | None = None,
    early_stop: EarlyStop | None = None,
) -> ArrayResult:
    """Submit, watch and resubmit until every unit of the cohort is done, resubmissions run out, or the early
    stop decides the cohort's comparison."""
    from eval.rollout.predictions import write_predictions
    from eval.rollout.run import check_workload
    from eval.tasks.load import load_tasks

    name = cohort if isinstance(cohort, str) else cohort.name
    workload = check_workload(loaded)
    ids = [t.instance_id for t in load_tasks(workload, loaded.spec.base_dir)]
    if early_stop is not None:
        ids = ordered(ids)
        early_stop.check()  # decided before (a resumed run): nothing is submitted
        on_poll = _stopping(early_stop, on_poll)
    options = loaded.spec.executor.slurm
    runner = runner or Runner()
    runner = Runner(runner.path, {"repeats": workload.repeats, **runner.extra})
    subs: list[Submission] = []
    todo = [] if early_stop is not None and early_stop.stopped else unfinished(run, name, ids, workload.repeats)
    shards = split(todo, default_shards(loaded.spec, max(1, len(ids))))
    try:
        for number in range(options.resubmits + 1):
            shards = [s for s in shards if s]
            if not shards:
                break
            sub = submit_array(loaded, run, name, base_url, shards, number, runner)
            subs.append(sub)
            watch(run, name, sub, options.poll_interval_s, on_poll)
            if early_stop is not None and early_stop.stopped:
                break  # decided: the array was cancelled, nothing is resubmitted
            shards = [unfinished(run, name, s, workload.repeats) for s in sub.shards]
    except BaseException:
        # Interrupted here (Ctrl-C, an error): leave no array running against a stack that is going away.
        cluster.cancel([s.job_id for s in subs])
        raise
    if run.cohort_dir(name).joinpath("units").is_dir():
        write_predictions(run, name)
    left = unfinished(run, name, ids, workload.repeats)
    left_units = sum(1 for i in left for r in range(workload.repeats) if not run.unit_done(name, i, r))
    total = len(ids) * workload.repeats
    return ArrayResult(name, total, total - left_units, left_units, subs)


def _stopping(early_stop: EarlyStop, on_poll: OnPoll | None) -> OnPoll:
    """An `on_poll` that asks the stopper (at most every `every_s`) and cancels the array once it decides."""
    last = [float("-inf")]

    def poll(sub: Submission) -> None:
        if on_poll is not None:
            on_poll(sub)
        if not early_stop.stopped and time.monotonic() - last[0] >= early_stop.every_s:
            last[0] = time.monotonic()
            if early_stop.check():
                cluster.cancel([sub.job_id])  # pending shards never start; running ones stop

    return poll
