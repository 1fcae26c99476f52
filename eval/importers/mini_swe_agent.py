"""Import mini-swe-agent trajectories (`<instance_id>.traj.json`, trajectory_format mini-swe-agent-1.x).

A file holds `info` (`exit_status`, `submission` = the patch, `model_stats`) and `messages`: system, user, then
assistant messages (2.x: the litellm message with `tool_calls`; `extra.response` is the whole raw response,
with id, finish_reason and usage) each followed by tool messages with the observations, and a final `exit`
message. A reply without a usable tool call raises FormatError inside mini-swe-agent's `query`: it is kept only
as the user feedback message, whose `extra.response` holds the raw response. One model response is one
trajectory line; nothing in it is repaired.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from eval.importers.common import ImportedUnit, ImporterError, trajectory_line
from store.unit_records import TrajectoryLine

# mini-swe-agent exit statuses -> specqual exit reasons. Exception names not listed become infra errors
# when they are in INFRA_STATUSES, else completed units with the status as their exit reason.
EXIT_REASONS = {
    "Submitted": "submitted",
    "LimitsExceeded": "max_turns",
    "RepeatedFormatError": "no_tool_call",
    "FormatError": "no_tool_call",
    "TimeExceeded": "time_limit",
    "ContextWindowExceededError": "context_length",
}
INFRA_STATUSES = {
    "APIConnectionError", "APIError", "InternalServerError", "ServiceUnavailableError", "RateLimitError",
    "Timeout", "APITimeoutError", "DockerException", "CalledProcessError",
}  # fmt: skip


def files(src: Path) -> list[Path]:
    return [src] if src.is_file() else sorted(src.rglob("*.traj.json"))


def _extra(message: dict[str, Any]) -> dict[str, Any]:
    extra = message.get("extra")
    return extra if isinstance(extra, dict) else {}


def _is_format_error(message: dict[str, Any]) -> bool:
    """mini-swe-agent 2.x raises FormatError inside `query`, so a reply without a usable tool call is not kept as
    an assistant message: its raw response rides on the user feedback message (`extra.response`)."""
    extra = _extra(message)
    return message.get("role") == "user" and extra.get("interrupt_type") == "FormatError" and "response" in extra


def _line(turn: int, start: dict[str, Any], following: list[dict[str, Any]]) -> TrajectoryLine:
    response = _extra(start).get("response")
    response = response if isinstance(response, dict) else {}
    choices = response.get("choices") or [{}]
    choice = choices[0] if isinstance(choices[0], dict) else {}
    raw: dict[str, Any] = choice["message"] if isinstance(choice.get("message"), dict) else start
    feedback = [m for m in following if _extra(m).get("interrupt_type")]
    observations = [m for m in following if not _extra(m).get("interrupt_type")]
    if _is_format_error(start):
        feedback.insert(0, start)
    return trajectory_line(
        turn,
        request_id=response.get("id"),
        finish_reason=choice.get("finish_reason"),
        content=raw.get("content"),
        reasoning_content=raw.get("reasoning_content"),
        tool_calls=raw.get("tool_calls") or None,
        token_ids=choice.get("token_ids"),
        prompt_token_ids=response.get("prompt_token_ids"),
        usage=response.get("usage"),
        observation="\n\n".join(_text(m) for m in observations) or None,
        feedback="\n\n".join(_text(m) for m in feedback) or None,
    )


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):  # multimodal / content-part form
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return "" if content is None else str(content)


def model_turns(messages: list[Any]) -> list[TrajectoryLine]:
    """One trajectory line per model response, in order."""
    messages = [m for m in messages if isinstance(m, dict)]
    starts = [i for i, m in enumerate(messages) if m.get("role") == "assistant" or _is_format_error(m)]
    lines = []
    for turn, index in enumerate(starts):
        end = starts[turn + 1] if turn + 1 < len(starts) else len(messages)
        following = [m for m in messages[index + 1 : end] if m.get("role") in ("tool", "user")]
        lines.append(_line(turn, messages[index], following))
    return lines


def convert(data: dict[str, Any], source: str, fallback_id: str) -> ImportedUnit:
    messages = data.get("messages")
    if not isinstance(messages, list):
        raise ImporterError(f"{source}: no `messages` list (not a mini-swe-agent trajectory)")
    info = data.get("info") or {}
    status = str(info.get("exit_status") or "")
    infra = status in INFRA_STATUSES
    return ImportedUnit(
        instance_id=str(data.get("instance_id") or fallback_id),
        lines=model_turns(messages),
        patch=str(info.get("submission") or ""),
        exit_reason=None if infra else EXIT_REASONS.get(status, status or None),
        status="infra_error" if infra else "completed",
        infra_reason=f"mini-swe-agent exit status {status}: {info.get('exception_str', '')}".strip() if infra else None,
        source=source,
        tools=["bash"],  # mini-swe-agent 2.x offers one tool (BASH_TOOL)
    )


def read(src: Path) -> Iterator[ImportedUnit]:
    for path in files(src):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise ImporterError(f"{path}: not readable JSON: {e}") from None
        if not isinstance(data, dict):
            raise ImporterError(f"{path}: not a JSON object")
        yield convert(data, str(path), path.name.removesuffix(".traj.json"))
