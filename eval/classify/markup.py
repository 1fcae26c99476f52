"""`leaked_tool_xml`: tool-call markup of the served format written as text instead of a structured call.

Not a leak: markup the model copies from its context (a line that already appears in the prompt or a tool
result, e.g. while editing a tool-call parser), and weak markers that are quoted or inside code (`<tool_call>`
in backticks, a fenced block or a string literal). Tool arguments are never searched: a patch or a heredoc may
legitimately contain any markup; broken argument markup is `malformed_tool_call`'s business.
"""

from __future__ import annotations

import re
from itertools import islice

from eval.classify.context import Context
from eval.classify.formats import any_marker_in, call_text_pattern_in, markers
from eval.classify.model import MAX_SPANS, Span, Turn, span_at
from eval.classify.namedcalls import named_call_spans
from eval.classify.toolcalls import CALL_CLOSING_TAGS

_QUOTES = "\"'`"


def detect_leaked_tool_xml(turn: Turn, ctx: Context) -> list[Span]:
    if not ctx.structured:
        return []  # the agent parses calls from text: markup in content is the protocol, not a leak
    tools = tuple(sorted(ctx.tools)) if ctx.tools_known else ()
    spans: list[Span] = []
    for name, text in turn.text_fields():
        if not text:
            continue
        if _may_hold_markup(text) and any_marker_in(ctx.tool_format, text):
            spans.extend(_marker_spans(name, text, ctx))
        elif (debris := _closing_debris(name, text)) is not None:
            spans.append(debris)
        if (calls := call_text_pattern_in(tools, text)) is not None:
            spans.extend(
                span_at(name, text, m.start(), m.end(), "tool call as bare JSON or a pythonic list")
                for m in islice(calls.finditer(text), MAX_SPANS)
                if _call_counts(text, m.start(), m.end(), ctx)
            )
    taken = {(s.field, s.start) for s in spans}
    spans.extend(s for s in named_call_spans(turn, ctx) if (s.field, s.start) not in taken)
    return spans


# A reply made of nothing but closing tags whose names are those of the call families (CALL_CLOSING_TAGS) or a
# piece of one (`</_call>`: `</tool_call>` split by BPE and re-joined without its head) is the tail of a call whose
# start the parser ate. A reply is never only closing tags otherwise.
_CLOSING_TAG = re.compile(r"</([^<>\s]{1,40})>")
_CLOSING_ONLY = re.compile(rf"\s*(?:{_CLOSING_TAG.pattern}\s*)+")
MIN_PIECE = 4


def _closing_debris(name: str, text: str) -> Span | None:
    if len(text) > 400 or "</" not in text or _CLOSING_ONLY.fullmatch(text) is None:
        return None
    for m in _CLOSING_TAG.finditer(text):
        piece = m.group(1).strip("_|｜-")
        if len(piece) >= MIN_PIECE and any(c.endswith(piece) or c.startswith(piece) for c in CALL_CLOSING_TAGS):
            stripped = text.strip()
            start = text.index(stripped)
            return span_at(name, text, start, start + len(stripped), "a reply of closing call tags alone")
    return None


def _call_counts(text: str, start: int, end: int, ctx: Context) -> bool:
    """Not copied, not in inline code; a pythonic list `[fn(...)]` only at the start of a line."""
    if _copied(text, start, end, ctx) or _in_inline_code(text, start):
        return False
    return text[start] != "[" or not text[text.rfind("\n", 0, start) + 1 : start].strip()


def _may_hold_markup(text: str) -> bool:
    """Substring tests in C before the big alternation: every marker holds one of these."""
    return "<" in text or "[TOOL_CALLS]" in text or "[ARGS]" in text or "to=functions." in text or "assistant" in text


def _marker_spans(name: str, text: str, ctx: Context) -> list[Span]:
    spans = []
    for marker in markers(ctx.tool_format):
        for m in marker.pattern.finditer(text):
            start, end = m.start(), m.end()
            if _copied(text, start, end, ctx) or _in_inline_code(text, start):
                continue
            if marker.strong and (
                (mentioned(text, start, end) and not _arguments_follow(text, end))
                or _quoted(text, start, end)
                or in_fenced_literal(text, start, end)
            ):
                continue
            if not marker.strong and not _weak_marker_counts(text, start, end, m.group()):
                continue
            spans.append(span_at(name, text, start, end, marker.name))
            if len(spans) >= MAX_SPANS:
                return _unless_examples(spans, text, ctx)
    spans.sort(key=lambda s: s.start)
    return _unless_examples(spans, text, ctx)


# A marker followed on its line by a JSON object (`commentary to=functions.get_weather json{"city":"Paris"}`: harmony
# with its tokens rendered empty) is a call's head and its arguments, not a marker named in a sentence.
_ARGUMENTS = re.compile(r"[ \t]*(?:<\|constrain\|>)?[ \t]*[a-z]{0,12}[ \t]*\{\s*(?:\"|\})")


def _arguments_follow(text: str, end: int) -> bool:
    return _ARGUMENTS.match(text, end) is not None


def _unless_examples(spans: list[Span], text: str, ctx: Context) -> list[Span]:
    """Without the markers inside fenced blocks when the text names call markup outside them, in inline code or
    mid-sentence (`the model emits an extra `</function>``, `omit the initial <tool_call> tag`): a bug report or a
    template shown to discuss the markup, not a call the model wrote. A model that leaks a call does not also
    write about the markup in prose."""
    fenced = [s for s in spans if _in_fence(text, s.start)]
    if not fenced or not _names_markup(text, ctx):
        return spans
    return [s for s in spans if not _in_fence(text, s.start)]


def _in_fence(text: str, at: int) -> bool:
    return text.count("```", 0, at) % 2 == 1


def _names_markup(text: str, ctx: Context) -> bool:
    """Some call marker outside fenced blocks is in inline code or named mid-sentence."""
    for marker in markers(ctx.tool_format):
        for m in marker.pattern.finditer(text):
            start, end = m.start(), m.end()
            if not _in_fence(text, start) and (_in_inline_code(text, start) or mentioned(text, start, end)):
                return True
    return False


MIN_QUOTE = 24


def _line(text: str, start: int, end: int) -> str:
    """The line holding the match; a short one (a bare `<tool_call>`) with the next line, so that a parser's
    source seen earlier does not excuse every later bare tag."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    if line_end >= 0 and line_end - line_start < MIN_QUOTE:
        line_end = text.find("\n", line_end + 1)
    return text[line_start : len(text) if line_end < 0 else line_end].strip()


def _copied(text: str, start: int, end: int, ctx: Context) -> bool:
    """The line holding the match already appears in the conversation: the model is quoting it."""
    if ctx.history.empty:
        return False
    return ctx.history.contains(_line(text, start, end))


def _weak_marker_counts(text: str, start: int, end: int, tag: str) -> bool:
    """A weak marker is call markup only where call markup stands: at the start of a line or right after another
    tag, outside code and quotes, and not closing an ordinary XML element. Prose that mentions `</function>`
    mid-sentence (a model reasoning about a parser) is not a leak."""
    line_start = text.rfind("\n", 0, start) + 1
    if text[line_start:start].strip() and text[start - 1] != ">" and not _glued_closing_tag(text, start, end, tag):
        return False
    return not _in_code_or_quotes(text, start, end) and not _closes_plain_xml(text, tag)


def _glued_closing_tag(text: str, start: int, end: int, tag: str) -> bool:
    """A closing tag glued to the text before it and ending its line (`Let me check.</tool_call>`): the tail of a
    call whose start the parser ate. Named in prose, a tag has a space before it."""
    line_end = text.find("\n", end)
    rest = text[end : len(text) if line_end < 0 else line_end]
    return tag.startswith("</") and not text[start - 1].isspace() and not rest.strip()


def _quoted(text: str, start: int, end: int) -> bool:
    """A string literal holding exactly the marker (`'<|eot_id|>'` in code that handles tokens)."""
    before = text[start - 1 : start]
    return bool(before) and before in _QUOTES and text[end : end + 1] == before


def in_fenced_literal(text: str, start: int, end: int) -> bool:
    """Inside a string literal on one line of a fenced code block (`prompt = "<|start|>user<|message|>..."`): code
    that builds or parses markup, shown as code. An engine that leaks markup does not open a fence and a quote
    around it."""
    if text.count("```", 0, start) % 2 == 0:
        return False
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line_end = len(text) if line_end < 0 else line_end
    return any(text.count(q, line_start, start) % 2 == 1 and q in text[end:line_end] for q in "\"'")


def _in_inline_code(text: str, start: int) -> bool:
    """Inside a `single backtick` span on the same line (outside fences): a discussion of the markup."""
    line_start = text.rfind("\n", 0, start) + 1
    return text.count("`", line_start, start) % 2 == 1 and text.count("```", line_start, start) == 0


def mentioned(text: str, start: int, end: int) -> bool:
    """Named in prose: after a word and a space, and followed by a space and a word or by punctuation (`the
    <|im_end|> token`, `GPT-2 ends documents with <|endoftext|>.`), or in parentheses. A leaked marker is glued
    to other text or markup, or stands at the start of a line or after a sentence."""
    before = text[max(0, start - 2) : start]
    after = text[end : end + 2]
    if before[-1:] == "(" and after[:1] == ")":
        return True
    if len(before) < 2 or before[1] != " " or not (before[0].isalpha() or before[0] in ",:;"):
        return False
    if after[:1] in (".", ",", ";", ":", "?", "!", ")"):
        return after[1:2] in ("", " ", "\n")
    return len(after) == 2 and after[0] == " " and after[1].isalpha()


def _in_code_or_quotes(text: str, start: int, end: int) -> bool:
    """Inside a fenced block, an inline code span or a string literal (a discussion of the markup)."""
    if text.count("```", 0, start) % 2 == 1:
        return True
    line_start = text.rfind("\n", 0, start) + 1
    if text.count("`", line_start, start) % 2 == 1:
        return True
    before = text[start - 1] if start > 0 else ""
    after = text[end] if end < len(text) else ""
    return bool(before) and before in _QUOTES and after == before


def _closes_plain_xml(text: str, tag: str) -> bool:
    """`</function>` that closes an ordinary `<function>` element (a template, HTML, XML docs)."""
    if not tag.startswith("</") or tag == "</tool_call>":
        return False
    name = tag[2:-1]
    return f"<{name}>" in text or f"<{name} " in text
