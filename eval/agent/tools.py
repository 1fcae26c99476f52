"""The agent's tools: their OpenAI `tools` schemas, how a returned call is checked, how an observation is cut.

A call is checked, never repaired: arguments that are not a JSON object, or a `bash` call without a `command`
string, yield a `CallProblem` that the agent answers with the configured feedback, while the call itself is
recorded exactly as returned.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from eval.protocols import ExecResult

TOOL_SCHEMAS: dict[str, dict[str, Any]] = {
    "bash": {
        "name": "bash",
        "description": (
            "Run one bash command in the repository (the working directory is the repository root) and return "
            "its output and exit code. Commands do not keep state between calls except files on disk."
        ),
        "parameters": {
            "type": "object",
            "properties": {"command": {"type": "string", "description": "the bash command to run"}},
            "required": ["command"],
            "additionalProperties": False,
        },
    },
    "submit": {
        "name": "submit",
        "description": "Finish: submit the current changes to the repository as your solution.",
        "parameters": {"type": "object", "properties": {}, "additionalProperties": False},
    },
}


def tool_definitions(names: list[str], strict: bool = False) -> list[dict[str, Any]]:
    """The OpenAI `tools` list for the configured tool names (unknown names raise ValueError)."""
    unknown = [n for n in names if n not in TOOL_SCHEMAS]
    if unknown:
        raise ValueError(f"unknown tools {unknown} (known: {', '.join(sorted(TOOL_SCHEMAS))})")
    out = []
    for name in names:
        function = dict(TOOL_SCHEMAS[name])
        if strict:
            function["strict"] = True
        out.append({"type": "function", "function": function})
    return out


@dataclass(frozen=True)
class ToolCall:
    """A returned call, checked: `command` is set for a valid bash call; `problem` names what is wrong."""

    call_id: str
    name: str
    command: str | None = None
    problem: str | None = None  # unknown_tool | malformed_arguments | missing_command
    detail: str = ""


def check_call(raw: Any, tools: list[str]) -> ToolCall:
    """Check one entry of `message.tool_calls` as returned by the server."""
    call_id = str(raw.get("id") or "") if isinstance(raw, dict) else ""
    function = raw.get("function") if isinstance(raw, dict) else None
    if not isinstance(function, dict):
        return ToolCall(call_id, "", problem="malformed_arguments", detail="the call has no function object")
    name = str(function.get("name") or "")
    if name not in tools:
        return ToolCall(call_id, name, problem="unknown_tool")
    arguments = function.get("arguments")
    if isinstance(arguments, str) and arguments.strip() == "" and name == "submit":
        return ToolCall(call_id, name)
    try:
        parsed = json.loads(arguments) if isinstance(arguments, str) else arguments
    except ValueError as e:
        return ToolCall(call_id, name, problem="malformed_arguments", detail=str(e))
    if not isinstance(parsed, dict):
        return ToolCall(call_id, name, problem="malformed_arguments", detail="the arguments are not a JSON object")
    if name == "bash":
        command = parsed.get("command")
        if not isinstance(command, str) or not command.strip():
            return ToolCall(call_id, name, problem="missing_command")
        return ToolCall(call_id, name, command=command)
    return ToolCall(call_id, name)


def truncate(text: str, limit: int) -> str:
    """Keep the head and the tail of a long observation, saying how much was cut from the middle."""
    if len(text) <= limit:
        return text
    marker = "\n[... {} characters omitted ...]\n"
    keep = max(limit - len(marker.format(len(text))), 0)
    head = keep // 2
    tail = keep - head
    return text[:head] + marker.format(len(text) - keep) + (text[-tail:] if tail else "")


def format_observation(result: ExecResult, timeout_s: float, limit: int) -> str:
    """What the model sees after a bash call: the output, then the exit code (or the timeout), head+tail cut."""
    output = result.output
    timed_out = f"[command timed out after {timeout_s:g} s]"
    status = timed_out if result.timed_out else f"[exit code {result.exit_code}]"
    separator = "" if not output or output.endswith("\n") else "\n"
    text = output + separator + status
    return truncate(text, limit)
