"""Structured tool calls: `malformed_tool_call` (a call the agent cannot run as intended), `unknown_tool` (a
well-formed name that was not offered) and `missing_tool_call` (a tool-calling agent loop got neither a call
nor a final answer).

A corrupted tool name is malformed: markup or a special token in it (`create_event<|channel|>analysis`), or a
near miss of an offered name (`bassh`, `functions.bash`). A clean name that is simply not offered is
`unknown_tool`, a warning: healthy models invent tools now and then. Without the offered tools (a pasted
reply) only the first kind is checked.

Not malformed: `{}` (or an empty string) for a tool without required arguments; markup inside an argument
value that is quoted (code that handles tool-call tags); unknown extra arguments.
"""

from __future__ import annotations

import json
import re
from itertools import islice

from eval.classify.context import Context
from eval.classify.model import MAX_SPANS, Span, ToolCall, Turn, span_at

_BAD_KEY = re.compile(r"[=<>\s\"]")
# The closing tags of every XML-like call family the classifier knows: qwen3_coder (`</parameter>`, `</function>`,
# `</tool_call>`), MiniMax / Anthropic-style invoke (`</invoke>`, `</function_calls>`), GLM (`</arg_key>`,
# `</arg_value>`), Jamba (`</tool_calls>`). One that ends the value (only closing tags after it) or precedes the next
# parameter's opening tag is the tail of the call markup, left in the value by a parser slip.
CALL_CLOSING_TAGS = (
    "parameter",
    "function",
    "tool_call",
    "invoke",
    "function_calls",
    "arg_key",
    "arg_value",
    "tool_calls",
)
_STRAY_CLOSE = re.compile(r"</(?:" + "|".join(CALL_CLOSING_TAGS) + ")>")
_NEXT_OPEN = re.compile(
    r"\s*(?:<(?:parameter|function)=|<(?:parameter|invoke)\s+name=|<arg_key>|(?:</[a-z_:]{1,30}>\s*)*$)"
)
_QUOTES = "\"'`"


def detect_malformed_tool_call(turn: Turn, ctx: Context) -> list[Span]:
    spans: list[Span] = []
    for call in turn.tool_calls:
        spans.extend(_name_problems(call, ctx))
        spans.extend(_argument_problems(call, ctx))
    return spans


_NAME_JUNK = re.compile(r"<\|?|\|?>|[<>{}\[\]()\"'`\s|｜▁]")


def _name_problems(call: ToolCall, ctx: Context) -> list[Span]:
    name = call.name
    if not name.strip():
        return [Span(call.name_field, 0, len(name), name, "empty tool name")]
    if name in ctx.tools:
        return []
    junk = _NAME_JUNK.search(name)
    if junk is not None:
        return [span_at(call.name_field, name, 0, len(name), "markup or a special token in the tool name")]
    original = near_tool(name, tuple(ctx.tools)) if ctx.tools_known else None
    if original is not None:
        return [span_at(call.name_field, name, 0, len(name), f"corrupted tool name (offered: {original!r})")]
    return []


def near_tool(name: str, offered: tuple[str, ...]) -> str | None:
    """The offered name that `name` is a corrupted copy of: one edit away, an offered name with a prefix or suffix
    glued on (`functions.bash`, `bash_exec`, `bashbash`) or its namespace dropped (`search_product_list` for
    `tool--product--search_product_list`), or a slip inside one word of a long name (`semanticSearter`,
    `keywordSearve` for `semanticSearch`, `keywordSearch`)."""
    for tool in offered:
        if len(tool) >= 3 and tool in name and len(name) <= 3 * len(tool) + 12:
            return tool
        if len(tool) >= 4 and _one_edit(tool, name):
            return tool
        if len(name) >= 8 and tool.endswith(name) and tool[-len(name) - 1] in _SEPARATORS:
            return tool
    slipped = [tool for tool in offered if _word_slip(tool, name)]
    return slipped[0] if len(slipped) == 1 else None


_SEPARATORS = "_-.:/"
_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")
WORD_SLIP_MIN_NAME = 8
WORD_SLIP_MIN_WORD = 5
WORD_SLIP_KEPT = 3  # leading letters of the word that stay
WORD_SLIP_CHANGED = 3  # letters changed, dropped or added at most, on each side


def _word_slip(tool: str, name: str) -> bool:
    """`name` is `tool` with a few letters changed inside one word of WORD_SLIP_MIN_WORD letters or more, after its
    first WORD_SLIP_KEPT letters, ending at the word's end or before it: not a word swapped for another
    (`central_list_sites` for `central_get_sites`) and not a suffix added (`keywordSearches`)."""
    if len(tool) < WORD_SLIP_MIN_NAME or abs(len(tool) - len(name)) > WORD_SLIP_CHANGED or tool == name:
        return False
    p = 0
    while p < min(len(tool), len(name)) and tool[p] == name[p]:
        p += 1
    q = 0
    while q < min(len(tool), len(name)) - p and tool[-1 - q] == name[-1 - q]:
        q += 1
    old, new = tool[p : len(tool) - q], name[p : len(name) - q]
    if not old or len(old) > WORD_SLIP_CHANGED or len(new) > WORD_SLIP_CHANGED:
        return False  # nothing of the tool's name lost: a suffix or an insertion
    if not (old + new).isalpha() or not new.islower() or not old.islower():
        return False
    for m in _WORD.finditer(tool):
        if m.start() <= p and p + len(old) <= m.end():
            return len(m.group()) >= WORD_SLIP_MIN_WORD and p - m.start() >= WORD_SLIP_KEPT
    return False


def _one_edit(a: str, b: str) -> bool:
    """Levenshtein distance 1, or two adjacent characters swapped."""
    if abs(len(a) - len(b)) > 1 or a == b:
        return False
    i = 0
    while i < min(len(a), len(b)) and a[i] == b[i]:
        i += 1
    if len(a) == len(b):
        return a[i + 1 :] == b[i + 1 :] or (a[i : i + 2] == b[i : i + 2][::-1] and a[i + 2 :] == b[i + 2 :])
    return a[i + 1 :] == b[i:] if len(a) > len(b) else a[i:] == b[i + 1 :]


def detect_unknown_tool(turn: Turn, ctx: Context) -> list[Span]:
    """A well-formed tool name that was not offered (only when the offered tools are known)."""
    if not ctx.tools_known:
        return []
    spans = []
    for call in turn.tool_calls:
        name = call.name
        if name.strip() and name not in ctx.tools and not _name_problems(call, ctx):
            known = ", ".join(sorted(ctx.tools)) or "none"
            spans.append(span_at(call.name_field, name, 0, len(name), f"unknown tool (offered: {known})"))
    return spans


def _argument_problems(call: ToolCall, ctx: Context) -> list[Span]:
    raw = call.arguments
    if not call.parses:
        return [span_at(call.args_field, raw, 0, len(raw), "arguments are not valid JSON")]
    args = call.parsed
    if not isinstance(args, dict):
        return [span_at(call.args_field, raw, 0, len(raw), "arguments are not a JSON object")]
    spans = [_locate(call, key, "argument key with markup or '='") for key in args if _BAD_KEY.search(key)]
    spec = ctx.tools.get(call.name)
    for required in spec.required if spec else ():
        value = args.get(required)
        if value is None or (isinstance(value, str) and not value.strip()):
            why = f"required argument {required!r} missing or empty"
            spans.append(span_at(call.args_field, raw, 0, len(raw), why))
    for value in args.values():
        if isinstance(value, str) and "</" in value:
            spans.extend(_stray_closing_tags(call, value))
    return spans


def _stray_closing_tags(call: ToolCall, value: str) -> list[Span]:
    """A closing tag of the call markup that ends the value or precedes the next parameter: a parse slip.

    Quoted tags are code (a parser's source, its tests) and tags that close an element opened in the value (an XML
    file) stay clean.
    """
    spans = []
    for m in islice(_STRAY_CLOSE.finditer(value), MAX_SPANS):
        before = value[m.start() - 1] if m.start() else ""
        if before in _QUOTES and before:
            continue
        name = m.group()[2:-1]
        if f"<{name}>" in value[: m.start()] or f"<{name} " in value[: m.start()]:
            continue  # it closes an element the value opened: an XML document, not a parser's leftover
        if _NEXT_OPEN.match(value, m.end()) is not None:
            spans.append(_locate(call, m.group(), "stray closing tag inside an argument value"))
    return spans


def _locate(call: ToolCall, text: str, why: str) -> Span:
    """The span of `text` in the raw arguments (JSON-escaped first, then as is; the whole string if neither)."""
    raw = call.arguments
    for needle in (json.dumps(text, ensure_ascii=False)[1:-1], text):
        at = raw.find(needle)
        if at >= 0:
            return span_at(call.args_field, raw, at, at + len(needle), why)
    return span_at(call.args_field, raw, 0, len(raw), why)


def detect_missing_tool_call(turn: Turn, ctx: Context) -> list[Span]:
    """No call in a tool-calling loop, unless this is a final answer the loop accepts.

    With a finish tool offered (`submit`), only that tool ends the loop, so every call-less turn misses one;
    without one, a call-less reply with content is the final answer when it is the last turn (or standalone).
    A reply cut by max_tokens is `truncated`, not a missing call.
    """
    if not ctx.structured or not ctx.tools_known or turn.tool_calls or turn.finish_reason == "length":
        return []
    if not ctx.tools or ctx.tool_choice == "none":
        return []  # nothing to call, or calls were forbidden
    if ctx.call_required:
        return [_no_call_span(turn)]
    if not ctx.finish_tool_offered and ctx.is_last is not False and turn.content.strip():
        return []
    return [_no_call_span(turn)]


def _no_call_span(turn: Turn) -> Span:
    return span_at("content", turn.content, 0, len(turn.content), "no structured tool call")
