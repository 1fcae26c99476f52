"""What an agent is built with (one per unit attempt) and the record callback it reports responses to."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any, TypeVar

import aiohttp

from eval.agent.client import ClientConfig
from eval.agent.errors import InfraError
from eval.protocols import ExecResult, Sandbox
from eval.spec.models import AgentSpec
from store.unit_records import TrajectoryLine

Record = Callable[[TrajectoryLine], None]
T = TypeVar("T")


@dataclass
class AgentContext:
    """One unit attempt's settings: the agent block, the request template (seed included), shared resources."""

    spec: AgentSpec
    client: ClientConfig
    session: aiohttp.ClientSession | None
    unit_key: str
    executor: Executor | None = None

    async def blocking(self, fn: Callable[..., T], *args: Any) -> T:
        """Run a blocking sandbox call off the event loop (on the rollout's own thread pool)."""
        return await asyncio.get_running_loop().run_in_executor(self.executor, fn, *args)

    async def execute(self, sandbox: Sandbox, command: str, timeout_s: float) -> ExecResult:
        """`sandbox.execute` off the event loop; a sandbox that fails (rather than the command) is infra."""
        try:
            return await self.blocking(sandbox.execute, command, timeout_s)
        except Exception as e:
            raise InfraError(f"sandbox failed: {type(e).__name__}: {e}") from e
