"""Import OpenHands SWE-bench runs (`output.jsonl` from its evaluation harness; one instance per line).

A line holds `instance_id`, `test_result.git_patch`, `error` and `history`: the event stream. An agent action
that came from a model call carries `tool_call_metadata.model_response`, the raw litellm response; a response
with N tool calls yields N action events that share it (`total_calls_in_response`), so responses are
deduplicated by their id. An agent `message` action without metadata is a reply without a tool call. An
observation answers the action whose id is its `cause`. Each model response is one trajectory line.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from eval.importers.common import ImportedUnit, ImporterError, trajectory_line
from store.unit_records import TrajectoryLine

# CodeActAgent's tools, for histories whose system event does not list them.
CODEACT_TOOLS = ["execute_bash", "str_replace_editor", "think", "finish", "execute_ipython_cell", "browser"]
# Errors OpenHands records that are the infrastructure's, not the model's (never graded as unresolved).
INFRA_MARKERS = ("runtime", "sandbox", "docker", "connection", "timed out", "timeout", "503", "502", "500")


def files(src: Path) -> list[Path]:
    return [src] if src.is_file() else sorted(src.rglob("output.jsonl"))


class _Turn:
    def __init__(self, response: dict[str, Any] | None, event: dict[str, Any]) -> None:
        self.response = response or {}
        self.event = event
        self.action_ids: set[int] = set()
        self.observations: list[str] = []


def _turns(history: list[Any]) -> list[_Turn]:
    turns: list[_Turn] = []
    by_response: dict[str, _Turn] = {}
    by_action: dict[int, _Turn] = {}
    for event in history:
        if not isinstance(event, dict):
            continue
        if event.get("source") == "agent" and "action" in event:
            meta = event.get("tool_call_metadata") or {}
            response = meta.get("model_response") if isinstance(meta, dict) else None
            if isinstance(response, dict):
                key = str(response.get("id") or id(response))
                turn = by_response.get(key)
                if turn is None:
                    turn = by_response[key] = _Turn(response, event)
                    turns.append(turn)
            elif event.get("action") == "message":
                turn = _Turn(None, event)
                turns.append(turn)
            else:
                continue  # system/recall/state actions are not model responses
            if isinstance(event.get("id"), int):
                turn.action_ids.add(event["id"])
                by_action[event["id"]] = turn
        elif "observation" in event and event.get("cause") in by_action:
            by_action[event["cause"]].observations.append(str(event.get("content") or ""))
    return turns


def _line(index: int, turn: _Turn) -> TrajectoryLine:
    response = turn.response
    choices = response.get("choices") or [{}]
    choice = choices[0] if isinstance(choices[0], dict) else {}
    message = choice.get("message") if isinstance(choice.get("message"), dict) else None
    if message is None:  # a reply without a tool call: OpenHands keeps only the text
        args = turn.event.get("args") or {}
        message = {"content": args.get("content", turn.event.get("message")), "tool_calls": None}
    return trajectory_line(
        index,
        request_id=response.get("id"),
        finish_reason=choice.get("finish_reason"),
        content=message.get("content"),
        reasoning_content=message.get("reasoning_content"),
        tool_calls=message.get("tool_calls") or None,
        token_ids=choice.get("token_ids"),
        prompt_token_ids=response.get("prompt_token_ids"),
        usage=response.get("usage"),
        observation="\n\n".join(turn.observations) or None,
    )


def _exit(history: list[Any], error: str | None) -> tuple[str, str | None, str | None]:
    """(status, exit_reason, infra_reason)."""
    finished = any(isinstance(e, dict) and e.get("action") == "finish" for e in history)
    if error:
        lowered = error.lower()
        if "maximum iteration" in lowered or "max_iterations" in lowered:
            return "completed", "max_turns", None
        if "context" in lowered and ("window" in lowered or "length" in lowered):
            return "completed", "context_length", None
        if any(marker in lowered for marker in INFRA_MARKERS):
            return "infra_error", None, error[:500]
        return "completed", "error", None
    return "completed", "submitted" if finished else "no_finish", None


def offered_tools(history: list[Any]) -> list[str]:
    """Tool names from the system event (`args.tools`, OpenAI schemas), else CodeActAgent's."""
    for event in history:
        if isinstance(event, dict) and event.get("action") == "system":
            tools = (event.get("args") or {}).get("tools")
            names = [t.get("function", {}).get("name") for t in tools or [] if isinstance(t, dict)]
            if any(names):
                return [str(n) for n in names if n]
    return list(CODEACT_TOOLS)


def convert(record: dict[str, Any], source: str) -> ImportedUnit:
    history = record.get("history")
    if not isinstance(history, list) or "instance_id" not in record:
        raise ImporterError(f"{source}: a line without `instance_id` and a `history` list (not OpenHands output)")
    result = record.get("test_result") or {}
    status, exit_reason, infra = _exit(history, record.get("error"))
    return ImportedUnit(
        instance_id=str(record["instance_id"]),
        lines=[_line(i, t) for i, t in enumerate(_turns(history))],
        patch=str(result.get("git_patch") or ""),
        exit_reason=exit_reason,
        status=status,
        infra_reason=infra,
        source=source,
        tools=offered_tools(history),
    )


def read(src: Path) -> Iterator[ImportedUnit]:
    for path in files(src):
        for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if not text.strip():
                continue
            try:
                record = json.loads(text)
            except ValueError as e:
                raise ImporterError(f"{path}:{number}: not JSON: {e}") from None
            yield convert(record, f"{path}:{number}")
