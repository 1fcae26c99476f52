"""Run one cohort's SWE-bench rollouts against an already running server: every unit not yet done, at most
`concurrency` at once, then the predictions files rebuilt from the unit directories.

Resume is by what is on disk: a unit whose verdict.json parses is skipped; any other unit directory is wiped
and run again. `on_unit_done(unit_dir)` is called after each verdict is written (grading can stream).
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
from eval.rollout.unit import RolloutEnv, run_unit
from eval.rollout.units import Unit, plan_units
from eval.spec.errors import SpecError
from eval.spec.load import LoadedSpec
from eval.spec.matrix import Cohort
from eval.spec.models import SandboxSpec, SWEBenchWorkload
from eval.stacks.watchdog import EVENTS_FILE
from eval.store.run import RunDir

UnitDone = Callable[[Path], Any]


@dataclass
class RolloutSummary:
    cohort: str
    total: int
    skipped: int
    completed: int
    infra_errors: int
    turns: int
    wall_s: float
    predictions: Path
    server_lost: str | None = None  # why the scheduler stopped waiting for the server (see eval.rollout.server)

    @property
    def ran(self) -> int:
        return self.completed + self.infra_errors


def default_sandbox_factory(spec: SandboxSpec) -> Callable[[Task], Sandbox]:
    """The registered sandbox for `sandbox.kind` (eval.sandbox.factory), given the unit's task."""
    from functools import partial

    from eval.sandbox.factory import open_sandbox

    return partial(open_sandbox, spec)


def check_workload(loaded: LoadedSpec) -> SWEBenchWorkload:
    """The SWE-bench workload, with the agent settings this module interprets checked before anything runs."""
    from eval.agent.feedback import FeedbackPolicy
    from eval.agent.tools import tool_definitions
    from eval.registry import AGENTS
    from eval.spec.load import check_known

    workload = loaded.spec.workloads.swebench
    if workload is None or not workload.enabled:
        raise SpecError("workloads.swebench", "the cohort file has no enabled SWE-bench workload")
    agent = workload.agent
    check_known(AGENTS, agent.kind, "workloads.swebench.agent.kind")
    try:
        tool_definitions(agent.tools)
    except ValueError as e:
        raise SpecError("workloads.swebench.agent.tools", str(e)) from None
    try:
        FeedbackPolicy.from_spec(agent.feedback, agent.final_answer_pattern, agent.max_consecutive_no_tool_calls)
    except ValueError as e:
        raise SpecError("workloads.swebench.agent.feedback", str(e)) from None
    return workload


def grade_when_done(submit: Callable[[Task, Path], Any], tasks: list[Task]) -> UnitDone:
    """An `on_unit_done` that hands each finished unit to a grading queue (`eval.grading.stream.GradeQueue`)."""
    from eval.store.atomic import read_json

    by_id = {t.instance_id: t for t in tasks}

    def done(unit_dir: Path) -> None:
        verdict = read_json(unit_dir / "verdict.json")
        if isinstance(verdict, dict) and verdict.get("instance_id") in by_id:
            submit(by_id[verdict["instance_id"]], unit_dir)

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
) -> RolloutSummary:
    """Run every unit of `cohort` that is not done yet; return counts. Infra failures never raise here."""
    import aiohttp

    from eval.registry import AGENTS, load

    workload = check_workload(loaded)
    name = cohort if isinstance(cohort, str) else cohort.name
    served = next((c.model.served_name for c in loaded.cohorts if c.name == name), loaded.spec.model.served_name)
    todo, done = plan_units(run, name, tasks, workload.repeats)
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
            await _run_all(todo, env, workload.concurrency, row, on_unit_done)
    predictions = write_predictions(run, name)
    return RolloutSummary(
        cohort=name,
        total=row.total,
        skipped=done,
        completed=row.done - done - row.infra_errors,
        infra_errors=row.infra_errors,
        turns=row.turns,
        wall_s=round(time.monotonic() - started, 3),
        predictions=predictions,
        server_lost=gate.lost,
    )


async def _run_all(
    todo: list[Unit], env: RolloutEnv, concurrency: int, row: CohortProgress, on_unit_done: UnitDone | None
) -> None:
    semaphore = asyncio.Semaphore(concurrency)

    async def one(unit: Unit) -> None:
        async with semaphore:
            row.unit_started()
            verdict = await run_unit(unit, env)
            row.unit_finished(verdict)
        await _notify(on_unit_done, unit.dir)

    await asyncio.gather(*(one(u) for u in todo))
