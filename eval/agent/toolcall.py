"""The tool-calling agent: model reply -> tool calls run in the sandbox -> results back, until submit or a limit.

Every reply is recorded as returned (one trajectory line, written after the agent has answered it, so the line
also holds the observation and feedback that were sent back). Replies without a usable call are never repaired:
the call stays in the history exactly as returned and is answered by the configured feedback.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from eval.agent.client import ChatClient, Conversation, ModelReply
from eval.agent.context import AgentContext, Record
from eval.agent.errors import ContextLengthError, InfraError
from eval.agent.feedback import FeedbackPolicy
from eval.agent.tools import check_call, format_observation
from eval.protocols import Sandbox, Task
from store.unit_records import TrajectoryLine

DEFAULT_SYSTEM_PROMPT = (
    "You are a software engineer fixing an issue in a repository. Use the `bash` tool to inspect files, edit "
    "them and run tests; each call runs one command in the repository root. When the repository contains your "
    "fix, call `submit`. Make the smallest change that solves the issue; do not modify the tests."
)
INSTANCE_TEMPLATE = "The repository is checked out at {workdir}. Resolve this issue:\n\n{problem}"


@dataclass
class Step:
    """What the agent did with one reply."""

    observations: list[str] = field(default_factory=list)
    feedback: list[str] = field(default_factory=list)
    submitted: bool = False
    called: bool = False

    def line_fields(self) -> dict[str, Any]:
        return {
            "observation": "\n\n".join(self.observations) if self.observations else None,
            "feedback": "\n\n".join(self.feedback) if self.feedback else None,
        }


@dataclass
class Totals:
    turns: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def add(self, reply: ModelReply) -> None:
        self.turns += 1
        usage = reply.usage or {}
        self.prompt_tokens += int(usage.get("prompt_tokens") or 0)
        self.completion_tokens += int(usage.get("completion_tokens") or 0)

    def outcome(self, exit_reason: str) -> dict[str, Any]:
        return {"exit_reason": exit_reason, **self.__dict__}


def assistant_message(reply: ModelReply) -> dict[str, Any]:
    """The reply as it goes back into the history: content and tool calls exactly as returned."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.tool_calls:
        message["tool_calls"] = reply.tool_calls
    elif reply.content is None:
        message["content"] = ""  # an empty reply still takes its turn in the history
    return message


def line(turn: int, reply: ModelReply | None, step: Step | None, error: str | None = None) -> TrajectoryLine:
    """One trajectory.jsonl line (results/README.md); a failed request has only `turn` and `error`."""
    fields = reply.record() if reply is not None else {}
    feedback = step.line_fields() if step is not None else {}
    return TrajectoryLine(turn=turn, **fields, **feedback, error=error)


class ToolCallAgent:
    """Talks to the cohort's server with structured tool calls (`bash`, `submit`) and works in the sandbox."""

    def __init__(self, ctx: AgentContext) -> None:
        spec = ctx.spec
        if ctx.session is None:
            raise ValueError("the tool-call agent needs an HTTP session")
        self.ctx = ctx
        self.client = ChatClient(ctx.session, ctx.client)
        self.tools = list(spec.tools)
        self.policy = FeedbackPolicy.from_spec(
            spec.feedback, spec.final_answer_pattern, spec.max_consecutive_no_tool_calls
        )

    def opening(self, task: Task, workdir: str) -> list[dict[str, Any]]:
        system = self.ctx.spec.system_prompt or DEFAULT_SYSTEM_PROMPT
        user = INSTANCE_TEMPLATE.format(workdir=workdir, problem=task.problem_statement)
        return [{"role": "system", "content": system}, {"role": "user", "content": user}]

    async def run(self, task: Task, sandbox: Sandbox, record: Record) -> dict[str, Any]:
        conversation = Conversation(self.ctx.client.request_prefix())
        for message in self.opening(task, sandbox.workdir):
            conversation.append(message)
        totals = Totals()
        streak = 0
        for turn in range(self.ctx.spec.max_turns):
            try:
                reply = await self.client.complete(conversation.body(), f"{self.ctx.unit_key}-t{turn}")
            except ContextLengthError:
                return totals.outcome("context_length")
            except InfraError as e:
                record(line(turn, None, None, error=str(e)))
                raise
            totals.add(reply)
            conversation.append(assistant_message(reply))
            step = await self.act(reply, sandbox, conversation)
            if not step.called and self.policy.is_final_answer(reply.content):
                record(line(turn, reply, step))
                return totals.outcome("final_answer")
            streak = 0 if step.called else streak + 1
            if streak >= self.policy.max_consecutive_no_tool_calls:
                record(line(turn, reply, step))
                return totals.outcome("no_tool_call")
            if not step.called:
                nudge = self.policy.message("no_tool_call", tools=", ".join(self.tools))
                step.feedback.append(nudge)
                conversation.append({"role": "user", "content": nudge})
            record(line(turn, reply, step))
            if step.submitted:
                return totals.outcome("submitted")
        return totals.outcome("max_turns")

    async def act(self, reply: ModelReply, sandbox: Sandbox, conversation: Conversation) -> Step:
        """Run each returned call in order (stopping at submit); answer each with its result or feedback."""
        step = Step()
        calls = reply.tool_calls if isinstance(reply.tool_calls, list) else []
        for raw in calls:
            step.called = True
            call = check_call(raw, self.tools)
            if call.problem is not None:
                text = self.policy.message(call.problem, call.name, call.detail, ", ".join(self.tools))
                step.feedback.append(text)
            elif call.name == "submit":
                step.submitted = True
                text = "Submitted."
                step.observations.append(text)
            else:
                text = await self.run_command(sandbox, call.command or "")
                step.observations.append(text)
            conversation.append({"role": "tool", "tool_call_id": call.call_id, "content": text})
            if step.submitted:
                break
        return step

    async def run_command(self, sandbox: Sandbox, command: str) -> str:
        spec = self.ctx.spec
        result = await self.ctx.execute(sandbox, command, spec.command_timeout_s)
        return format_observation(result, spec.command_timeout_s, spec.observation_max_chars)
