"""Control agents that never call a model: `gold` applies the instance's gold patch (it validates the
environment and the grader: every instance should resolve), `empty` submits nothing (none should resolve)."""

from __future__ import annotations

from typing import Any

from eval.agent.context import AgentContext, Record
from eval.protocols import Sandbox, Task

_DELIMITER = "__SPECQUAL_GOLD_PATCH__"


def apply_command(patch: str) -> str:
    """`git apply` reading the patch from a quoted here-document (no temp file, nothing expanded)."""
    body = patch if patch.endswith("\n") else patch + "\n"
    return f"git apply --whitespace=nowarn - <<'{_DELIMITER}'\n{body}{_DELIMITER}\n"


def _outcome(exit_reason: str) -> dict[str, Any]:
    return {"exit_reason": exit_reason, "turns": 0, "prompt_tokens": 0, "completion_tokens": 0}


class GoldAgent:
    """Applies `task.patch` in the sandbox; exit_reason `submitted`, or `gold_patch_failed` with git's output."""

    def __init__(self, ctx: AgentContext) -> None:
        self.ctx = ctx

    async def run(self, task: Task, sandbox: Sandbox, record: Record) -> dict[str, Any]:
        result = await self.ctx.execute(sandbox, apply_command(task.patch), self.ctx.spec.command_timeout_s)
        if result.exit_code != 0 or result.timed_out:
            return {**_outcome("gold_patch_failed"), "detail": result.output[-2000:]}
        return _outcome("submitted")


class EmptyAgent:
    """Does nothing and submits the untouched repository (an empty patch)."""

    def __init__(self, ctx: AgentContext) -> None:
        self.ctx = ctx

    async def run(self, task: Task, sandbox: Sandbox, record: Record) -> dict[str, Any]:
        return _outcome("submitted")
