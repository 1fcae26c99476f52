"""The shape of a reply: `empty_response`, `reasoning_only` (also when max_tokens cut the reasoning) and
`truncated` (finish reason `length`).

Content that is only a stray markdown mark (`\n\n* `, `-`, `.`), which a reasoning parser leaves behind when
it splits badly, counts as no content; an emoji or a one-word answer is content.
"""

from __future__ import annotations

from eval.classify.context import Context
from eval.classify.model import Span, Turn, span_at

_STRAY = " \t\r\n*-.#>`_"
_THINK_OPEN = ("<think>", "<thinking>", "<|channel|>analysis")
_THINK_CLOSE = ("</think>", "</thinking>", "<|end|>", "<|channel|>final")


def _blank(text: str) -> bool:
    return not text.strip(_STRAY)


def detect_empty_response(turn: Turn, ctx: Context) -> list[Span]:
    if turn.tool_calls or not _blank(turn.content) or turn.reasoning.strip():
        return []
    return [Span("content", 0, len(turn.content), turn.content, "no content, reasoning or tool call")]


def detect_reasoning_only(turn: Turn, ctx: Context) -> list[Span]:
    """Reasoning, then nothing: no answer and no call. A reply cut by max_tokens while still in its reasoning is
    `reasoning_only` too (with `truncated`): the reasoning field alone, or, with no reasoning parser, content
    that opens a think block and never closes it."""
    if turn.tool_calls:
        return []
    if turn.finish_reason == "length" and _open_think(turn.content):
        return [span_at("content", turn.content, 0, len(turn.content), "cut by max_tokens inside <think>")]
    if not _blank(turn.content) or not turn.reasoning.strip():
        return []
    why = "cut by max_tokens while still reasoning" if turn.finish_reason == "length" else "reasoning without answer"
    return [span_at("reasoning_content", turn.reasoning, 0, len(turn.reasoning), f"{why} or call")]


def _open_think(content: str) -> bool:
    head = content.lstrip()
    return head.startswith(_THINK_OPEN) and not any(tag in head for tag in _THINK_CLOSE)


def detect_truncated(turn: Turn, ctx: Context) -> list[Span]:
    if turn.finish_reason != "length":
        return []
    return [Span("finish_reason", 0, 6, "length", "the reply hit max_tokens")]
