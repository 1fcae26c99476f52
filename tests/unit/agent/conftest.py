"""Fixtures of the agent tests: the local task set (real git repositories), the bwrap sandbox, and a helper
that runs one agent against the scripted model server (a test double for a model able to solve tasks)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from eval.agent.client import ClientConfig
from eval.agent.context import AgentContext
from eval.agent.tools import tool_definitions
from eval.protocols import Task
from eval.sandbox.bwrap import BwrapSandbox
from eval.spec.models import AgentSpec, SWEBenchWorkload
from eval.tasks import local_set
from eval.tasks.load import load_tasks
from tests.doubles.scripted_model import Reply, ScriptedModelServer


@pytest.fixture(scope="session")
def local_tasks(tmp_path_factory: pytest.TempPathFactory) -> list[Task]:
    directory = tmp_path_factory.mktemp("local-tasks")
    local_set.generate(directory)
    return load_tasks(SWEBenchWorkload(dataset=local_set.LOCAL_DATASET, path=str(directory)), Path(directory))


@dataclass
class AgentRun:
    outcome: dict[str, Any] | None
    error: BaseException | None
    lines: list[dict[str, Any]]
    requests: list[dict[str, Any]]
    headers: list[dict[str, str]]
    patch: str | None
    base_url: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def run_agent(task: Task, respond: Any, kind: str = "toolcall", retries: int = 2, **spec: Any) -> AgentRun:
    """Run one agent of `kind` on `task` in a fresh bwrap sandbox against a scripted model server."""
    from eval.registry import AGENTS, load

    agent_spec = AgentSpec(kind=kind, **spec)
    lines: list[dict[str, Any]] = []
    with ScriptedModelServer(respond) as server:
        config = ClientConfig(
            base_url=server.base_url,
            model="scripted",
            max_tokens=64,
            tools=tool_definitions(agent_spec.tools, agent_spec.strict_tools),
            tool_choice=agent_spec.tool_choice,
            sampling={"temperature": 0.0, "seed": 7},
            return_token_ids=agent_spec.return_token_ids,
            retries=retries,
            backoff_s=0.01,
        )

        async def go() -> tuple[dict[str, Any] | None, BaseException | None, str | None]:
            sandbox = BwrapSandbox(task)
            try:
                async with aiohttp.ClientSession() as session:
                    agent = load(AGENTS, kind)(AgentContext(agent_spec, config, session, "unit-key"))
                    try:
                        outcome = await agent.run(task, sandbox, lines.append)
                    except Exception as e:
                        return None, e, None
                    return outcome, None, sandbox.diff()
            finally:
                sandbox.close()

        outcome, error, patch = asyncio.run(go())
        return AgentRun(outcome, error, lines, list(server.requests), list(server.headers), patch, server.base_url)


def replies(*items: Reply) -> list[Reply]:
    return list(items)
