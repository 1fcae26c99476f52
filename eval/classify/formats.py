"""Tool-call formats of the served models: which markup means "a tool call written as text".

Each format lists its markers as (regex, strong). A strong marker is specific enough to be a call by itself
(`<function=bash>`, `[TOOL_CALLS]`, a harmony `<|call|>` token, bare `{"name": "bash", "arguments": ...}`);
a weak one (`<tool_call>`, a lone closing tag) is a leak only when it is not quoted or inside code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

FORMATS = ("qwen3_coder", "hermes", "mistral", "llama", "harmony", "auto")

# vLLM --tool-call-parser names (cohort.json `tool_call_parser`) -> the markup family they parse.
_PARSER_FORMATS = {
    "qwen3_coder": "qwen3_coder",
    "qwen3_xml": "qwen3_coder",
    "minimax_m2": "qwen3_coder",
    "hermes": "hermes",
    "qwen3_json": "hermes",
    "mistral": "mistral",
    "llama": "llama",
    "llama3_json": "llama",
    "llama4_json": "llama",
    "harmony": "harmony",
    "openai": "harmony",
    "gpt_oss": "harmony",
}


def normalize_format(parser: str | None) -> str:
    """The markup family of a tool-call parser name; unknown or missing names check every family."""
    if not parser:
        return "auto"
    return _PARSER_FORMATS.get(parser.strip().lower(), "auto")


@dataclass(frozen=True)
class Marker:
    name: str
    pattern: re.Pattern[str]
    strong: bool


_QWEN = (
    Marker("function_tag", re.compile(r"<function=[^<>\s]{0,80}>"), True),
    Marker("parameter_tag", re.compile(r"<parameter=[^<>\s]{0,80}>"), True),
    Marker("tool_call_tag", re.compile(r"</?tool_call>"), False),
    Marker("closing_tag", re.compile(r"</(?:function|parameter)>"), False),
)
_HERMES = (
    Marker("tool_call_json", re.compile(r"<tool_call>\s*\{\s*\"name\"\s*:"), True),
    Marker("tool_call_tag", re.compile(r"</?tool_call>"), False),
)
_MISTRAL = (
    Marker("mistral_tool_calls", re.compile(r"\[TOOL_CALLS\]"), True),
    Marker("mistral_args", re.compile(r"\[(?:ARGS|CALL_ID)\]"), False),
)
_LLAMA = (Marker("python_tag", re.compile(r"<\|python_tag\|>"), True),)
_HARMONY = (
    Marker("harmony_token", re.compile(r"<\|(?:channel|call|message|constrain|start|end|return)\|>"), True),
    Marker("harmony_recipient", re.compile(r"\bto=functions\.[A-Za-z_][\w.-]{0,80}"), True),
)
# Any format: a tool call as bare JSON naming an offered tool (built per tool set, see `bare_json_pattern`).
_BARE_JSON = r"\{\s*\"name\"\s*:\s*\"(?:%s)\"\s*,\s*\"(?:arguments|parameters)\"\s*:"

MARKERS: dict[str, tuple[Marker, ...]] = {
    "qwen3_coder": _QWEN + _HERMES[:1],
    "hermes": _HERMES + _QWEN[:2],
    "mistral": _MISTRAL,
    "llama": _LLAMA,
    "harmony": _HARMONY,
}
MARKERS["auto"] = tuple({m.name: m for ms in MARKERS.values() for m in ms}.values())

# One search per field decides whether any marker can be present (the fast path for clean text).
_ANY_TEXT = {fmt: re.compile("|".join(m.pattern.pattern for m in markers)) for fmt, markers in MARKERS.items()}


def any_marker(fmt: str) -> re.Pattern[str]:
    return _ANY_TEXT.get(fmt, _ANY_TEXT["auto"])


def markers(fmt: str) -> tuple[Marker, ...]:
    return MARKERS.get(fmt, MARKERS["auto"])


_BARE_CACHE: dict[tuple[str, ...], re.Pattern[str]] = {}


def bare_json_pattern(tool_names: tuple[str, ...]) -> re.Pattern[str] | None:
    """`{"name": "<one of the tools>", "arguments": ...` for this tool set (compiled once per set)."""
    if not tool_names:
        return None
    pattern = _BARE_CACHE.get(tool_names)
    if pattern is None:
        pattern = re.compile(_BARE_JSON % "|".join(re.escape(n) for n in tool_names))
        _BARE_CACHE[tool_names] = pattern
    return pattern
