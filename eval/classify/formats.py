"""Tool-call formats: which markup means "a tool call (or a chat-template token) written as text".

Every template and parser family vLLM ships has a marker list of (regex, strong). A strong marker is specific
enough to be a call by itself (`<function=bash>`, `[TOOL_CALLS]`, a harmony `<|call|>` token, DeepSeek's
`<｜tool▁calls▁begin｜>`, `<invoke name="bash">`); a weak one (`<tool_call>`, a lone closing tag) is a leak
only where call markup stands (see `eval.classify.markup`). Families are keyed by vLLM's `--tool-call-parser`
names; `auto` (unknown or no parser: a pasted reply) checks every family.

Calls written as bare JSON (`{"name": "bash", "arguments": ...}`, Llama 3's `"parameters"`) or as a pythonic
list (`[get_weather(city="Paris")]`) are recognised only for the tools the request offered.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_PARSER_FORMATS = {
    "qwen3_coder": "qwen3_coder",
    "qwen3_xml": "qwen3_coder",
    "hermes": "hermes",
    "qwen3_json": "hermes",
    "longcat": "hermes",
    "mistral": "mistral",
    "llama": "llama",
    "llama3_json": "llama",
    "llama4_json": "llama",
    "llama4_pythonic": "pythonic",
    "pythonic": "pythonic",
    "olmo3": "pythonic",
    "harmony": "harmony",
    "openai": "harmony",
    "gpt_oss": "harmony",
    "deepseek_v3": "deepseek",
    "deepseek_v31": "deepseek",
    "deepseek_v32": "deepseek",
    "kimi_k2": "kimi_k2",
    "minimax": "minimax",
    "minimax_m2": "minimax",
    "granite": "granite",
    "granite-20b-fc": "granite",
    "internlm": "internlm",
    "jamba": "jamba",
    "glm45": "glm",
    "glm47": "glm",
    "glm4_moe": "glm",
    "gemma4": "gemma",
}
FORMATS = (*sorted(set(_PARSER_FORMATS.values())), "auto")


def normalize_format(parser: str | None) -> str:
    """The markup family of a tool-call parser name (or a family name); unknown or missing: every family."""
    if not parser:
        return "auto"
    key = parser.strip().lower()
    return key if key in FORMATS else _PARSER_FORMATS.get(key, "auto")


@dataclass(frozen=True)
class Marker:
    name: str
    pattern: re.Pattern[str]
    strong: bool


def _m(name: str, pattern: str, strong: bool = True) -> Marker:
    return Marker(name, re.compile(pattern), strong)


_BAR = "[|｜]"  # DeepSeek and Kimi tokens exist with ASCII and full-width bars
_BARS = _BAR + "{1,2}"  # a bar doubled in decoding (`<｜｜DSML｜｜invoke`) is the same token, broken
_SEP = "[▁_ ]"
_TOOL_CALL_TAG = _m("tool_call_tag", r"</?tool_call>", False)
_FAMILIES: dict[str, tuple[Marker, ...]] = {
    "qwen3_coder": (
        _m("function_tag", r"<function=[^<>\s]{0,80}>"),
        _m("parameter_tag", r"<parameter=[^<>\s]{0,80}>"),
        _TOOL_CALL_TAG,
        _m("closing_tag", r"</(?:function|parameter)>", False),
        _m("partial_call_tag", r"<(?:function|tool_call)\s*\Z", False),
    ),
    "hermes": (_m("tool_call_json", r"<tool_call>\s*\{\s*\"name\"\s*:"), _TOOL_CALL_TAG),
    "mistral": (_m("mistral_tool_calls", r"\[TOOL_CALLS\]"), _m("mistral_args", r"\[(?:ARGS|CALL_ID)\]", False)),
    "llama": (_m("llama_token", r"<\|(?:python_tag|eom_id)\|>"),),
    "pythonic": (),
    "harmony": (
        _m("harmony_token", r"<\|(?:channel|call|message|constrain|start|end|return)\|>"),
        _m("harmony_recipient", r"t(?<!\wt)o=functions\.[A-Za-z_][\w.-]{0,80}"),
        # Harmony with its special tokens rendered as empty strings: `...analysis text.assistantfinalfour`.
        _m("harmony_stripped", r"a(?<![A-Za-z]a)ssistant(?:final|commentary|analysis)"),
    ),
    "deepseek": (
        _m(
            "deepseek_token",
            "<" + _BARS + "tool" + _SEP + "(?:calls?|outputs?)" + _SEP + "(?:begin|end)" + _BARS + ">",
        ),
        _m("deepseek_sep", "<" + _BARS + "tool" + _SEP + "sep" + _BARS + ">"),
        _m("dsml_token", "</?" + _BARS + "DSML" + _BARS),
    ),
    "kimi_k2": (_m("kimi_token", r"<\|tool_calls?_(?:section_)?(?:begin|end)\|>|<\|tool_call_argument_begin\|>"),),
    "minimax": (
        _m("invoke_tag", r"<invoke\s+name=\s*[\"'][^\"'<>]{1,80}[\"']\s*>"),
        _m("parameter_name_tag", r"<parameter\s+name=\s*[\"'][^\"'<>]{1,80}[\"']\s*>"),
        _m("namespaced_call_tag", r"</?[a-z]{2,20}:tool_call>"),
        _m("function_calls_tag", r"</?(?:function_calls|invoke)>", False),
    ),
    "granite": (_m("granite_token", r"<\|tool_call\|>"), _TOOL_CALL_TAG),
    "internlm": (_m("internlm_token", r"<\|(?:action_start|action_end|plugin|interpreter)\|>"),),
    "jamba": (_m("jamba_tag", r"</?tool_calls>", False),),
    "glm": (
        _m("glm_arg_tag", r"<arg_(?:key|value)>"),
        _m("glm_closing_tag", r"</arg_(?:key|value)>", False),
        _TOOL_CALL_TAG,
    ),
    "gemma": (_m("gemma_token", r"<\|(?:tool_call|tool_response|channel)>|<(?:tool_call|channel)\|>"),),
}
# Families whose models also write another family's markup (Qwen3-Coder can fall back to Hermes JSON).
_ALSO = {"qwen3_coder": ("hermes",), "hermes": ("qwen3_coder",), "glm": ("hermes",), "granite": ("hermes",)}


# `<tool_call>` is the tag of most families (Hermes, Qwen, GLM, Granite's fallback): at the start of a line and
# outside code it is a leak whatever the served format, as is a call tag cut off at the end of a reply.
_UNIVERSAL_WEAK = frozenset({"tool_call_tag", "partial_call_tag"})


def _family_markers(fmt: str) -> tuple[Marker, ...]:
    """Whatever the served format, every family's strong markers count (a corrupted stack writes tokens of no
    format it serves, and a healthy one writes them only when quoting, which the quoting rules excuse); weak
    markers (`<tool_call>`, lone closing tags, `[ARGS]`) only for the served family and its relatives."""
    everything = {m.name: m for markers in _FAMILIES.values() for m in markers}
    if fmt == "auto":
        return tuple(everything.values())
    names = (fmt, *_ALSO.get(fmt, ()))
    served = {m.name: m for n in names for m in _FAMILIES[n]}
    strong = {name: m for name, m in everything.items() if m.strong or name in _UNIVERSAL_WEAK}
    return tuple({**served, **strong}.values())


MARKERS: dict[str, tuple[Marker, ...]] = {fmt: _family_markers(fmt) for fmt in FORMATS}
# One search per field decides whether any marker can be present (the fast path for clean text). Every marker
# starts with a literal character (lookbehinds come after it), so the regex engine skips ahead in C.
_ANY_TEXT = {
    fmt: re.compile("|".join(m.pattern.pattern for m in markers) or r"(?!)") for fmt, markers in MARKERS.items()
}


def any_marker(fmt: str) -> re.Pattern[str]:
    return _ANY_TEXT.get(fmt, _ANY_TEXT["auto"])


def _alternatives(pattern: str) -> list[str]:
    """The top-level alternatives of a regex (split at `|` outside groups, classes and escapes)."""
    out, depth, start, i, in_class = [], 0, 0, 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "|" and depth == 0:
            out.append(pattern[start:i])
            start = i + 1
        i += 1
    return [*out, pattern[start:]]


# A substring that every match of a marker holds: `<` for the tags and tokens (every top-level alternative starts
# with it), the literal of the others. A marker whose substring a text lacks cannot match there, so the search
# for any marker leaves it out (the alternation tried at every `t` and `a` of prose costs more than the rest).
_NEEDLES = {
    r"\[TOOL_CALLS\]": "[TOOL_CALLS]",
    r"\[(?:ARGS|CALL_ID)\]": "[",
    r"t(?<!\wt)o=functions\.[A-Za-z_][\w.-]{0,80}": "to=functions.",
    r"a(?<![A-Za-z]a)ssistant(?:final|commentary|analysis)": "assistant",
}


def _needle(pattern: str) -> str | None:
    if all(alternative.startswith("<") for alternative in _alternatives(pattern)):
        return "<"
    return _NEEDLES.get(pattern)


_PRESENT: dict[tuple[str, frozenset[str]], re.Pattern[str]] = {}


def any_marker_in(fmt: str, text: str) -> bool:
    """`any_marker(fmt).search(text) is not None`, with the markers whose substring `text` lacks left out."""
    fmt = fmt if fmt in MARKERS else "auto"
    needles = _FORMAT_NEEDLES[fmt]
    present = frozenset(needle for needle in needles if needle in text)
    pattern = _PRESENT.get((fmt, present))
    if pattern is None:
        kept = [m.pattern.pattern for m in MARKERS[fmt] if (n := _needle(m.pattern.pattern)) is None or n in present]
        pattern = _PRESENT[fmt, present] = re.compile("|".join(kept) or r"(?!)")
    return pattern.search(text) is not None


_FORMAT_NEEDLES = {
    fmt: frozenset(n for m in markers if (n := _needle(m.pattern.pattern)) is not None)
    for fmt, markers in MARKERS.items()
}


def markers(fmt: str) -> tuple[Marker, ...]:
    return MARKERS.get(fmt, MARKERS["auto"])


# A call to an offered tool as bare JSON (either key order of Llama 3's template) or as a pythonic list.
_BARE_JSON = r"\{\s*\"name\"\s*:\s*\"(?:%s)\"\s*,\s*\"(?:arguments|parameters)\"\s*:"
_PYTHONIC = r"\[\s*(?:%s)\((?:\)|[A-Za-z_]\w*\s*=)"  # at the start of a line: checked by the caller
_CALL_CACHE: dict[tuple[str, ...], re.Pattern[str]] = {}
_ONE_SHAPE_CACHE: dict[tuple[tuple[str, ...], bool], re.Pattern[str]] = {}


def call_text_pattern_in(tool_names: tuple[str, ...], text: str) -> re.Pattern[str] | None:
    """`call_text_pattern(tool_names)` for searching `text`: the bare JSON shape only where `text` holds `"name"`,
    the pythonic one only where it holds `[` (the same matches; the other shape's start is not tried at every
    `{` or `[`). None where neither can match."""
    json_shape, pythonic = '"name"' in text, "[" in text
    if not tool_names or not (json_shape or pythonic):
        return None
    if json_shape and pythonic:
        return call_text_pattern(tool_names)
    pattern = _ONE_SHAPE_CACHE.get((tool_names, json_shape))
    if pattern is None:
        names = "|".join(re.escape(n) for n in tool_names)
        pattern = re.compile(_BARE_JSON % names if json_shape else _PYTHONIC % names)
        _ONE_SHAPE_CACHE[tool_names, json_shape] = pattern
    return pattern


def call_text_pattern(tool_names: tuple[str, ...]) -> re.Pattern[str] | None:
    """Bare JSON or pythonic calls of these tools (compiled once per tool set)."""
    if not tool_names:
        return None
    pattern = _CALL_CACHE.get(tool_names)
    if pattern is None:
        names = "|".join(re.escape(n) for n in tool_names)
        pattern = re.compile(f"{_BARE_JSON % names}|{_PYTHONIC % names}")  # one scan for both shapes
        _CALL_CACHE[tool_names] = pattern
    return pattern


def bare_json_pattern(tool_names: tuple[str, ...]) -> re.Pattern[str] | None:
    """Kept for callers of the earlier API: the same as `call_text_pattern`."""
    return call_text_pattern(tool_names)
