"""The shape of a reply: `empty_response`, `reasoning_only` and `truncated` (finish reason `length`).

Content that is only a stray markdown mark (`\n\n* `, `-`, `.`), which a reasoning parser leaves behind when
it splits badly, counts as no content; an emoji or a one-word answer is content.
"""

from __future__ import annotations

from eval.classify.context import Context
from eval.classify.model import Span, Turn, span_at

_STRAY = " \t\r\n*-.#>`_"


def _blank(text: str) -> bool:
    return not text.strip(_STRAY)


def detect_empty_response(turn: Turn, ctx: Context) -> list[Span]:
    if turn.tool_calls or not _blank(turn.content) or turn.reasoning.strip():
        return []
    return [Span("content", 0, len(turn.content), turn.content, "no content, reasoning or tool call")]


def detect_reasoning_only(turn: Turn, ctx: Context) -> list[Span]:
    """Reasoning, then nothing: no answer and no call. A reply cut by max_tokens is `truncated` instead."""
    if turn.tool_calls or not _blank(turn.content) or not turn.reasoning.strip() or turn.finish_reason == "length":
        return []
    return [span_at("reasoning_content", turn.reasoning, 0, len(turn.reasoning), "reasoning without answer or call")]


def detect_truncated(turn: Turn, ctx: Context) -> list[Span]:
    if turn.finish_reason != "length":
        return []
    return [Span("finish_reason", 0, 6, "length", "the reply hit max_tokens")]
