"""The classifier's typed view of a model response: tool calls, turns, evidence, tool schemas.

Raw responses are untrusted (a corrupted stack can return anything), so the constructors here coerce every
field to the expected type instead of raising: a list of content parts becomes text, a non-string argument
becomes its JSON, a missing field becomes empty.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

EVIDENCE_TEXT_MAX = 200
# Evidence kept per label and field of a turn: a 10 MB garbage argument must not yield a million spans.
MAX_SPANS = 16
_NOT_PARSED = object()


def as_text(value: Any) -> str:
    """Text of a content-like value: str as is, OpenAI content parts joined, anything else as JSON or ''."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = [p.get("text") if isinstance(p, dict) else p for p in value]
        return "".join(p for p in parts if isinstance(p, str))
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


def printable(text: str, limit: int = EVIDENCE_TEXT_MAX) -> str:
    """Evidence text safe to write as UTF-8 JSON: lone surrogates escaped, long matches cut."""
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    if text.isascii():
        return text
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


@dataclass(frozen=True)
class Evidence:
    """Why a label was given: the field of the turn, the character span in it and the matched text."""

    label: str
    field: str
    start: int
    end: int
    text: str
    detail: str = ""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "label": self.label,
            "field": self.field,
            "start": self.start,
            "end": self.end,
            "text": printable(self.text),
        }
        if self.detail:
            out["detail"] = self.detail
        return out


@dataclass(frozen=True)
class Span:
    """What a detector found: the field, the character span in it, the matched text, and why."""

    field: str
    start: int
    end: int
    text: str
    detail: str = ""

    def labelled(self, label: str) -> Evidence:
        return Evidence(label, self.field, self.start, self.end, self.text, self.detail)


def span_at(fieldname: str, text: str, start: int, end: int, detail: str = "") -> Span:
    """A span of `text`; the stored text is cut to the evidence limit (positions stay exact)."""
    return Span(fieldname, start, end, text[start : min(end, start + EVIDENCE_TEXT_MAX)], detail)


@dataclass
class ToolCall:
    """One structured tool call, arguments kept as the raw string the server returned."""

    index: int
    name: str
    arguments: str
    id: str = ""

    @cached_property
    def parsed(self) -> Any:
        """The decoded arguments, or `_NOT_PARSED` when they are not JSON (parsed once, shared by detectors)."""
        raw = self.arguments.strip()
        if not raw:
            return {}
        try:
            return json.loads(raw)
        except (ValueError, RecursionError):
            return _NOT_PARSED

    @property
    def parses(self) -> bool:
        return self.parsed is not _NOT_PARSED

    @property
    def args_field(self) -> str:
        return f"tool_calls[{self.index}].arguments"

    @property
    def name_field(self) -> str:
        return f"tool_calls[{self.index}].name"

    @classmethod
    def from_raw(cls, index: int, raw: Any) -> ToolCall:
        if not isinstance(raw, dict):
            return cls(index=index, name="", arguments=as_text(raw))
        fn = raw.get("function")
        if not isinstance(fn, dict):
            fn = {"name": raw.get("name"), "arguments": raw.get("arguments")}
        args = fn.get("arguments")
        return cls(
            index=index,
            name=as_text(fn.get("name")),
            arguments=args if isinstance(args, str) else as_text(args) if args is not None else "",
            id=as_text(raw.get("id")),
        )


@dataclass
class Turn:
    """One assistant response (one trajectory.jsonl line or one OpenAI-format message)."""

    index: int
    content: str = ""
    reasoning: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    finish_reason: str | None = None
    token_ids: list[int] | None = None
    observation: str = ""  # what the agent sent back after this turn (context for the next one)
    feedback: str = ""
    infra_error: str = ""  # the request failed (server died, timeout): nothing the model said, never labelled

    def text_fields(self) -> list[tuple[str, str]]:
        """(field name, text) of the model-written free text: content and reasoning."""
        return [("content", self.content), ("reasoning_content", self.reasoning)]

    @cached_property
    def fields(self) -> list[tuple[str, str]]:
        """Every model-written string: content, reasoning, tool names and raw arguments (built once per turn)."""
        return self.all_fields()

    def all_fields(self) -> list[tuple[str, str]]:
        """Every model-written string: content, reasoning, tool names and raw arguments."""
        out = self.text_fields()
        for call in self.tool_calls:
            out.append((call.name_field, call.name))
            out.append((call.args_field, call.arguments))
        return out

    @classmethod
    def from_record(cls, raw: Any, index: int = 0) -> Turn:
        """From a trajectory.jsonl record or an OpenAI assistant message; never raises."""
        if not isinstance(raw, dict):
            return cls(index=index, content=as_text(raw))
        turn = raw.get("turn")
        calls = raw.get("tool_calls")
        reasoning = raw.get("reasoning_content")
        if reasoning is None:
            reasoning = raw.get("reasoning")
        finish = raw.get("finish_reason")
        ids = raw.get("token_ids")
        return cls(
            index=turn if isinstance(turn, int) and not isinstance(turn, bool) else index,
            content=as_text(raw.get("content")),
            reasoning=as_text(reasoning),
            tool_calls=[ToolCall.from_raw(i, c) for i, c in enumerate(calls)] if isinstance(calls, list) else [],
            finish_reason=finish if isinstance(finish, str) else None,
            token_ids=[t for t in ids if isinstance(t, int)] if isinstance(ids, list) else None,
            observation=as_text(raw.get("observation")),
            feedback=as_text(raw.get("feedback")),
            infra_error=as_text(raw.get("error")),
        )


@dataclass(frozen=True)
class ToolSpec:
    """What the classifier needs of a tool schema: its name and required arguments."""

    name: str
    required: tuple[str, ...] = ()
    properties: tuple[str, ...] = ()

    @classmethod
    def from_openai(cls, raw: Any) -> ToolSpec | None:
        """From `{"type": "function", "function": {"name", "parameters"}}` (or the inner function object)."""
        if not isinstance(raw, dict):
            return None
        fn = raw.get("function", raw)
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
            return None
        params = fn.get("parameters")
        params = params if isinstance(params, dict) else {}
        required = params.get("required")
        required = required if isinstance(required, list) else []
        props = params.get("properties")
        props = props if isinstance(props, dict) else {}
        return cls(fn["name"], tuple(str(r) for r in required), tuple(str(p) for p in props))


# The agent's standard tools (eval agent `toolcall`): used when the run did not record the schemas it sent.
DEFAULT_TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec("bash", required=("command",), properties=("command",)),
    ToolSpec("submit"),
)
# Tool names that end an agent loop: a plain-text reply is a final answer only when none of these is offered.
FINISH_TOOLS = frozenset({"submit", "finish", "final_answer", "task_complete", "attempt_completion"})
