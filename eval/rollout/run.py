"""Run one cohort's SWE-bench rollouts against an already running server: every unit not yet done, at most
`concurrency` at once, then the predictions files rebuilt from the unit directories.

Resume is by what is on disk: a unit whose verdict.json parses and is not an infra error is skipped; any other
unit directory (half-finished, or an infra error) is wiped and run again. `on_unit_done(unit_dir)` is called
after each verdict is written (grading can stream). With an `early_stop` (eval.rollout.stopper), units go
instance by instance in the shared seeded order and no new unit starts once the cohort's comparison is decided;
a resumed run asks before it schedules anything, and then re-runs only its infra errors.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eval.protocols import Sandbox, Task
from eval.rollout.predictions import write_predictions
from eval.rollout.progress import CohortProgress, RolloutProgress
from eval.rollout.server import ServerGate
from eval.rollout.stopper import EarlyStop
from eval.rollout.unit import RolloutEnv, run_unit
from eval.rollout.units import Unit, infra_failed, plan_units
from eval.spec.errors import SpecError
from eval.spec.load import LoadedSpec
from eval.spec.matrix import Cohort
from eval.spec.models import SandboxSpec, SWEBenchWorkload
from eval.stacks.watchdog import EVENTS_FILE
from eval.store.run import RunDir
from store.layout import VERDICT
from store.record_io import read_record
from store.unit_records import VerdictRecord

UnitDone = Callable[[Path], Any]


@dataclass
class RolloutCounts:
    cohort: str
    total: int
    skipped: int
    completed: int
    infra_errors: int
    turns: int
    wall_s: float
    predictions: Path
    server_lost: str | None = None  # why the scheduler stopped waiting for the server (see eval.rollout.server)
    stopped_early: str | None = None  # the early stop's reason (early_stop.json), when it stopped the cohort
    not_run: int = 0  # units left out by the early stop

    @property
    def ran(self) -> int:
        return self.completed + self.infra_errors


def default_sandbox_factory(spec: SandboxSpec) -> Callable[[Task], Sandbox]:
    """The registered sandbox for `sandbox.kind` (eval.sandbox.factory), given the unit's task."""
    from functools import partial

    from eval.sandbox.factory import open_sandbox

    return partial(open_sandbox, spec)


def check_workload(loaded: LoadedSpec) -> SWEBenchWorkload:
    """The enabled SWE-bench workload (its agent block was checked when the file loaded: eval.spec.workloads)."""
    workload = loaded.spec.workloads.swebench
    if workload is None or not workload.enabled:
        raise SpecError("workloads.swebench", "the cohort file has no enabled SWE-bench workload")
    return workload


def grade_when_done(submit: Callable[[Task, Path], Any], tasks: list[Task]) -> UnitDone:
    """An `on_unit_done` that hands each finished unit to a grading queue (`eval.grading.stream.GradeQueue`)."""
    by_id = {t.instance_id: t for t in tasks}

    def done(unit_dir: Path) -> None:
        verdict = read_record(unit_dir / VERDICT, VerdictRecord)
        if verdict is not None and verdict.instance_id in by_id:
            submit(by_id[verdict.instance_id], unit_dir)

    return done


async def _notify(callback: UnitDone | None, unit_dir: Path) -> None:
    if callback is not None:
        result = callback(unit_dir)
        if inspect.isawaitable(result):
            await result


async def run_rollouts(
    loaded: LoadedSpec,
    run: RunDir,
    cohort: Cohort | str,
    base_url: str,
    tasks: list[Task],
    progress: RolloutProgress | None = None,
    on_unit_done: UnitDone | None = None,
    sandbox_factory: Callable[[Task], Sandbox] | None = None,
    early_stop: EarlyStop | None = None,
) -> RolloutCounts:
    """Run every unit of `cohort` that is not done yet; return counts. Infra failures never raise here."""
    import aiohttp

    from eval.registry import AGENTS, load

    workload = check_workload(loaded)
    name = cohort if isinstance(cohort, str) else cohort.name
    served = next((c.model.served_name for c in loaded.cohorts if c.name == name), loaded.spec.model.served_name)
    todo, done = plan_units(run, name, tasks, workload.repeats, instance_major=early_stop is not None)
    decided = early_stop is not None and await asyncio.to_thread(early_stop.check)
    if decided:
        # decided before (a resumed run): the same decision, no new unit; only the units that had started and
        # ended in an infra error run again (an uninterrupted run would have finished them)
        todo = [u for u in todo if infra_failed(run, name, u.task.instance_id, u.repeat)]
    row = (progress or RolloutProgress(enabled=False)).cohort(name, len(tasks) * workload.repeats, done)
    started = time.monotonic()
    events = run.cohort_dir(name) / EVENTS_FILE
    gate = ServerGate(base_url, loaded.spec.server.startup_timeout_s + 60, events)  # + detection and stop
    connector = aiohttp.TCPConnector(limit=workload.concurrency, force_close=False)
    with ThreadPoolExecutor(max_workers=workload.concurrency + 1, thread_name_prefix="sandbox") as executor:
        async with aiohttp.ClientSession(connector=connector) as session:
            env = RolloutEnv(
                workload=workload,
                sampling=loaded.spec.sampling,
                model=served,
                base_url=base_url,
                agent_cls=load(AGENTS, workload.agent.kind),
                sandbox_factory=sandbox_factory or default_sandbox_factory(workload.sandbox),
                session=session,
                executor=executor,
                on_turn=row.turn,
                gate=gate,
            )
            ran = await _run_all(todo, env, workload.concurrency, row, on_unit_done, None if decided else early_stop)
    predictions = write_predictions(run, name)
    return RolloutCounts(
        cohort=name,
        total=row.total,
        skipped=done,
        completed=row.done - done - row.infra_errors,
        infra_errors=row.infra_errors,
        turns=row.turns,
        wall_s=round(time.monotonic() - started, 3),
        predictions=predictions,
        server_lost=gate.lost,
        stopped_early=early_stop.record.reason if early_stop is not None and early_stop.record else None,
        not_run=len(todo) - ran,
    )


async def _run_all(
    todo: list[Unit],
    env: RolloutEnv,
    concurrency: int,
    row: CohortProgress,
    on_unit_done: UnitDone | None,
    early_stop: EarlyStop | None = None,
) -> int:
    """Run the units, at most `concurrency` at once; return how many ran (the early stop may leave some out)."""
    semaphore = asyncio.Semaphore(concurrency)
    ran = 0

    async def one(unit: Unit) -> None:
        nonlocal ran
        async with semaphore:
            if early_stop is not None and early_stop.stopped:
                return
            ran += 1
            row.unit_started()
            verdict = await run_unit(unit, env)
            row.unit_finished(verdict.status == "infra_error")
        await _notify(on_unit_done, unit.dir)
        if early_stop is not None:
            await asyncio.to_thread(early_stop.unit_done)

    await asyncio.gather(*(one(u) for u in todo))
    return ran
