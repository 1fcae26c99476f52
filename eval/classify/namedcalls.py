"""Call markup that names an offered tool (classifier 1.12.0): an XML-like element in content or reasoning whose tag
or `name=` attribute is a tool the request offered, when no structured call was parsed. Templates and parsers of
other engines than vLLM's families write calls this way (`<function name="get_weather"><param name="location">Rome
</param></function>`, `<tool name="X">`, `<tool_call name="X">`, `<X><city>Paris</city></X>`); a model whose call
was not parsed leaves it as text.

The element counts where:
  - its tag is a call word (CALL_TAGS, maybe with a namespace: `<ns:invoke …>`) and one of its attributes NAME_ATTRS
    holds an offered tool's name, or
  - its tag is an offered tool's name and its first child is an element (`<get_weather>\n<location>…`): parameters;
and the request's tools are known and the turn has no structured call. Quoted markup is clean, as for the other
families (eval/classify/markup.py): in a fenced block, in inline code, in a string literal, named mid-sentence in
prose, or on a line copied from the conversation.
"""

from __future__ import annotations

import re
from itertools import islice

from eval.classify.context import Context
from eval.classify.model import MAX_SPANS, Span, Turn, span_at

_CALL_TAGS = "function invoke tool tool_call toolcall call function_call functioncall tool_use use_tool action"
CALL_TAGS = frozenset(_CALL_TAGS.split(" "))
NAME_ATTRS = frozenset(("name", "tool", "tool_name", "function", "function_name"))
# A tool named like an HTML element (`table`, `form`) does not make a page a call: its tag alone never counts.
_HTML = (
    "a abbr b body br button code div em form h1 h2 h3 head html i img input label li link main nav ol option p pre"
    " script section select span strong style svg table tbody td th thead title tr u ul"
)
HTML_TAGS = frozenset(_HTML.split(" "))
_ATTR = r"""[\w:.-]+\s*=\s*(?:"[^"<>\n]*"|'[^'<>\n]*'|[^\s<>"']+)"""
_OPEN = re.compile(rf"<(?P<tag>[A-Za-z_][\w:.-]{{0,63}})(?P<attrs>(?:\s+{_ATTR})*)\s*>")
_ATTRS = re.compile(r"""([\w:.-]+)\s*=\s*(?:"([^"<>\n]*)"|'([^'<>\n]*)'|([^\s<>"']+))""")
_CHILD = re.compile(r"\s*<[A-Za-z_]")


def named_call_spans(turn: Turn, ctx: Context) -> list[Span]:
    """The span of each element naming an offered tool in content or reasoning (module docstring)."""
    if not ctx.tools_known or not ctx.tools or turn.tool_calls:
        return []
    from eval.classify.markup import _copied, _in_code_or_quotes, mentioned

    out: list[Span] = []
    for name, text in turn.text_fields():
        if "<" not in text:
            continue
        found = 0
        for m in _OPEN.finditer(text):
            why = _names_tool(m, text, ctx)
            if not why:
                continue
            start, end = m.start(), m.end()
            if _in_code_or_quotes(text, start, end) or mentioned(text, start, end) or _copied(text, start, end, ctx):
                continue
            out.append(span_at(name, text, start, end, why))
            found += 1
            if found >= MAX_SPANS:
                break
    return out


def _names_tool(m: re.Match[str], text: str, ctx: Context) -> str:
    tag = m.group("tag")
    if tag in ctx.tools and tag.lower() not in HTML_TAGS:
        if _CHILD.match(text, m.end()) is not None and not text.startswith("</", m.end() + _skip(text, m.end())):
            return f"call markup: an element named after the offered tool {tag!r} with parameter elements"
        return ""
    if tag in ctx.tools or tag.rsplit(":", 1)[-1].lower() not in CALL_TAGS or not m.group("attrs"):
        return ""
    for attr in islice(_ATTRS.finditer(m.group("attrs")), 8):
        value = next(v for v in attr.groups()[1:] if v is not None)
        if attr.group(1).rsplit(":", 1)[-1].lower() in NAME_ATTRS and value in ctx.tools:
            return f"call markup: <{tag} {attr.group(1)}=…> names the offered tool {value!r}"
    return ""


def _skip(text: str, at: int) -> int:
    return len(text[at : at + 64]) - len(text[at : at + 64].lstrip())
