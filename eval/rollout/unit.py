"""One unit, start to finish: a clean directory, attempts until one is not an infra failure, verdict last.

A unit directory without a parsing verdict.json is half-finished: it is wiped and run again from scratch, so a
killed run never leaves a unit counted twice or half-counted. Infra failures (server errors after the client's
retries, a sandbox that fails) are retried up to `max_infra_retries`, each retry once the server answers again
(eval.rollout.server: a server being restarted does not burn the retries); each failed attempt's trajectory is
kept under `attempts/<n>/` for forensics, and a unit that runs out of attempts, or whose server is lost, gets
status `infra_error`, which is never graded as unresolved.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import time
import traceback
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import aiohttp

from eval.agent.client import ClientConfig
from eval.agent.context import AgentContext
from eval.agent.errors import InfraError
from eval.agent.tools import tool_definitions
from eval.protocols import Sandbox, Task
from eval.rollout.server import ServerGate
from eval.rollout.units import Unit, unit_seed
from eval.spec.models import Sampling, SWEBenchWorkload
from eval.store.atomic import atomic_write_text
from store.atomic import atomic_write_json
from store.layout import PATCH, TRAJECTORY, VERDICT
from store.unit_records import TrajectoryLine, VerdictRecord


@dataclass
class RolloutEnv:
    """What every unit of one cohort's rollout shares."""

    workload: SWEBenchWorkload
    sampling: Sampling
    model: str
    base_url: str
    agent_cls: Callable[[AgentContext], Any]
    sandbox_factory: Callable[[Task], Sandbox]
    session: aiohttp.ClientSession | None = None
    executor: Executor | None = None
    on_turn: Callable[[], None] | None = None
    gate: ServerGate | None = None  # after an infra failure: wait for the server before the next attempt

    def client_config(self, seed: int | None) -> ClientConfig:
        agent = self.workload.agent
        sampling: dict[str, Any] = {"temperature": self.sampling.temperature, "top_p": self.sampling.top_p}
        if self.sampling.top_k is not None:
            sampling["top_k"] = self.sampling.top_k
        if seed is not None:
            sampling["seed"] = seed
        return ClientConfig(
            base_url=self.base_url,
            model=self.model,
            max_tokens=agent.max_tokens_per_reply,
            tools=tool_definitions(agent.tools, agent.strict_tools),
            tool_choice=agent.tool_choice,
            sampling=sampling,
            return_token_ids=agent.return_token_ids,
            timeout_s=agent.request_timeout_s,
            retries=agent.request_retries,
        )


class TrajectoryFile:
    """Appends one JSON line per model response and flushes it (the file is rewritten if the unit restarts)."""

    def __init__(self, path: Path, on_line: Callable[[], None] | None = None) -> None:
        self._file: IO[str] = path.open("a", encoding="utf-8")
        self._on_line = on_line

    def __call__(self, line: TrajectoryLine) -> None:
        self._file.write(json.dumps(line.model_dump(mode="json"), ensure_ascii=False) + "\n")
        self._file.flush()
        if self._on_line is not None:
            self._on_line()

    def close(self) -> None:
        self._file.close()


def patch_stats(patch: str) -> dict[str, int]:
    files = added = removed = 0
    for text in patch.splitlines():
        if text.startswith("diff --git "):
            files += 1
        elif text.startswith("+") and not text.startswith("+++"):
            added += 1
        elif text.startswith("-") and not text.startswith("---"):
            removed += 1
    return {"patch_files": files, "patch_lines_added": added, "patch_lines_removed": removed}


def reset_dir(path: Path) -> None:
    """Wipe a half-finished unit so that it restarts cleanly."""
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True, exist_ok=True)


def archive_attempt(unit_dir: Path, attempt: int, error: BaseException) -> None:
    """Move a failed attempt's trajectory to attempts/<n>/ with the error, so the next attempt starts empty."""
    target = unit_dir / "attempts" / str(attempt)
    target.mkdir(parents=True, exist_ok=True)
    trajectory = unit_dir / TRAJECTORY
    if trajectory.exists():
        trajectory.replace(target / TRAJECTORY)
    text = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    (target / "error.txt").write_text(text, encoding="utf-8")


def infra_reason(error: BaseException) -> str:
    if isinstance(error, InfraError):
        return str(error)
    return f"{type(error).__name__}: {error}"  # an unexpected failure is infra too: never a low score


async def attempt_unit(unit: Unit, env: RolloutEnv, seed: int | None, attempt: int) -> tuple[dict[str, Any], str]:
    """One attempt: sandbox up, agent run, patch taken, sandbox down. Raises on infra failure."""
    key = f"{unit.cohort}.{unit.task.instance_id}.r{unit.repeat}.a{attempt}"
    ctx = AgentContext(env.workload.agent, env.client_config(seed), env.session, key, env.executor)
    agent = env.agent_cls(ctx)
    try:
        sandbox = await ctx.blocking(env.sandbox_factory, unit.task)
    except Exception as e:
        raise InfraError(f"sandbox could not start: {type(e).__name__}: {e}") from e
    try:
        record = TrajectoryFile(unit.dir / TRAJECTORY, env.on_turn)
        try:
            outcome = await agent.run(unit.task, sandbox, record)
        finally:
            record.close()
        try:
            patch = await ctx.blocking(sandbox.diff)
        except Exception as e:
            raise InfraError(f"sandbox diff failed: {type(e).__name__}: {e}") from e
    finally:
        await ctx.blocking(sandbox.close)
    return outcome, patch


async def run_unit(unit: Unit, env: RolloutEnv) -> VerdictRecord:
    """Run (or re-run from scratch) one unit; write patch.diff, then verdict.json last. Returns the verdict."""
    loop = asyncio.get_running_loop()
    # file-system work (rmtree, fsync) runs on the pool so that it never stalls other units' requests
    await loop.run_in_executor(env.executor, reset_dir, unit.dir)
    seed = unit_seed(env.sampling, unit.task.instance_id, unit.repeat)
    started = time.monotonic()
    outcome: dict[str, Any] = {}
    patch = ""
    reason: str | None = None
    attempts = 0
    for attempt in range(1, env.workload.max_infra_retries + 2):
        if env.gate is not None and env.gate.lost is not None:
            reason = f"{reason}; then server lost: {env.gate.lost}" if reason else f"server lost: {env.gate.lost}"
            break
        attempts = attempt
        try:
            outcome, patch = await attempt_unit(unit, env, seed, attempt)
            reason = None
            break
        except Exception as e:
            reason = infra_reason(e)
            await loop.run_in_executor(env.executor, archive_attempt, unit.dir, attempt, e)
        if env.gate is not None and attempt <= env.workload.max_infra_retries:
            await env.gate.wait_up()  # a restarting server must not burn the unit's retries
    verdict = VerdictRecord(
        cohort=unit.cohort,
        instance_id=unit.task.instance_id,
        repo=unit.task.repo,
        repeat=unit.repeat,
        status="completed" if reason is None else "infra_error",
        infra_reason=reason,
        exit_reason=outcome.get("exit_reason") if reason is None else None,
        turns=int(outcome.get("turns", 0)),
        prompt_tokens=int(outcome.get("prompt_tokens", 0)),
        completion_tokens=int(outcome.get("completion_tokens", 0)),
        wall_s=round(time.monotonic() - started, 3),
        **patch_stats(patch),
        attempts=attempts,
        seed=seed,
    )
    await loop.run_in_executor(env.executor, write_outcome, unit.dir, patch, verdict)
    return verdict


def write_outcome(unit_dir: Path, patch: str, verdict: VerdictRecord) -> None:
    """patch.diff, then verdict.json LAST: the unit counts as done only once the verdict parses."""
    atomic_write_text(unit_dir / PATCH, patch)
    atomic_write_json(unit_dir / VERDICT, verdict.record())
