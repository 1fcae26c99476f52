"""Test double standing in for a model able to solve tasks: a real local HTTP server (aiohttp, own thread)
that answers OpenAI chat-completion requests with scripted replies.

`respond(request) -> reply` decides each answer from the request it gets (so replies stay deterministic per
unit with many units in flight). A reply is a dict: `{"http_status": 500, "text": ...}` for an error, or the
assistant message fields `content`, `tool_calls`, `reasoning`, `finish_reason`. Every request body is kept in
`requests`. `run_agent(task, respond)` runs one agent in a fresh bwrap sandbox against it.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from aiohttp import web

from tests.fixtures.threaded_app import ThreadedApp

Reply = dict[str, Any]


def call(name: str, arguments: str, call_id: str = "call_0") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def bash(command: str, call_id: str = "call_0") -> dict[str, Any]:
    return call("bash", json.dumps({"command": command}), call_id)


def submit(call_id: str = "call_s") -> dict[str, Any]:
    return call("submit", "{}", call_id)


def turn_of(request: dict[str, Any]) -> int:
    """0 for the first request of a conversation, +1 per assistant message already in it."""
    return sum(1 for m in request["messages"] if m.get("role") == "assistant")


def problem_of(request: dict[str, Any]) -> str:
    return next(m["content"] for m in request["messages"] if m.get("role") == "user")


def scripted(replies: list[Reply]) -> Callable[[dict[str, Any]], Reply]:
    """The same list of replies for every conversation, indexed by turn (the last one repeats)."""
    return lambda request: replies[min(turn_of(request), len(replies) - 1)]


def completion(request: dict[str, Any], reply: Reply, number: int) -> dict[str, Any]:
    message = {"role": "assistant", "content": reply.get("content"), "reasoning": reply.get("reasoning")}
    if reply.get("tool_calls"):
        message["tool_calls"] = reply["tool_calls"]
    finish = reply.get("finish_reason") or ("tool_calls" if reply.get("tool_calls") else "stop")
    choice: dict[str, Any] = {"index": 0, "message": message, "finish_reason": finish, "stop_reason": None}
    body: dict[str, Any] = {
        "id": f"chatcmpl-scripted-{number}",
        "object": "chat.completion",
        "created": 0,
        "model": request.get("model", "scripted"),
        "choices": [choice],
        "usage": {"prompt_tokens": 100 + 10 * turn_of(request), "completion_tokens": 7, "total_tokens": 0},
    }
    if request.get("return_token_ids"):
        choice["token_ids"] = [1, 2, 3]
        body["prompt_token_ids"] = [9] * 5
    return body


class ScriptedModelServer(ThreadedApp):
    """`with ScriptedModelServer(respond) as server: server.base_url`."""

    name = "the scripted model server"
    client_max_size = 64 * 1024 * 1024  # whole agent conversations are posted back each turn

    def __init__(self, respond: Callable[[dict[str, Any]], Reply], delay_s: float = 0.0) -> None:
        super().__init__()
        self.respond = respond
        self.delay_s = delay_s
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []

    async def _handle(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.requests.append(body)
        self.headers.append({k.lower(): v for k, v in request.headers.items()})
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        reply = self.respond(body)
        if "http_status" in reply:
            return web.Response(status=reply["http_status"], text=reply.get("text", "error"))
        return web.json_response(completion(body, reply, len(self.requests)))

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/chat/completions", self._handle)


def solver(tasks: list[Any]) -> Callable[[dict[str, Any]], Reply]:
    """Stands in for a model that solves every task: turn 0 applies the instance's gold patch with `git apply`
    through the bash tool, turn 1 submits. The instance is recognised by its problem statement."""
    from eval.agent.controls import apply_command

    def respond(request: dict[str, Any]) -> Reply:
        problem = problem_of(request)
        task = next(t for t in tasks if t.problem_statement in problem)
        if turn_of(request) == 0:
            return {"content": "I will apply the fix.", "tool_calls": [bash(apply_command(task.patch))]}
        return {"content": None, "tool_calls": [submit()]}

    return respond


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


def run_agent(task: Any, respond: Any, kind: str = "toolcall", retries: int = 2, **spec: Any) -> AgentRun:
    """Run one agent of `kind` on `task` in a fresh bwrap sandbox against a scripted model server."""
    from eval.agent.client import ClientConfig
    from eval.agent.context import AgentContext
    from eval.agent.tools import tool_definitions
    from eval.registry import AGENTS, load
    from eval.sandbox.bwrap import BwrapSandbox
    from eval.spec.models import AgentSpec

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
                        outcome = await agent.run(task, sandbox, lambda ln: lines.append(ln.model_dump(mode="json")))
                    except Exception as e:
                        return None, e, None
                    return outcome, None, sandbox.diff()
            finally:
                sandbox.close()

        outcome, error, patch = asyncio.run(go())
        return AgentRun(outcome, error, lines, list(server.requests), list(server.headers), patch, server.base_url)
