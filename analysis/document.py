"""A tiny document model rendered twice: Markdown (images linked) and self-contained HTML (images embedded).

Reports are lists of blocks; text uses two inline marks only, `code` and **bold**, which both renderers know.
"""

from __future__ import annotations

import base64
import html
import re
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Heading:
    level: int
    text: str


@dataclass(frozen=True)
class Para:
    text: str


@dataclass(frozen=True)
class Bullets:
    items: list[str]


@dataclass(frozen=True)
class Table:
    header: list[str]
    rows: list[list[str]]
    right: set[int] = field(default_factory=set)  # column indexes aligned right (numbers)


@dataclass(frozen=True)
class Image:
    path: str  # relative to the report's directory
    alt: str


@dataclass(frozen=True)
class Code:
    text: str


Block = Heading | Para | Bullets | Table | Image | Code


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def to_markdown(blocks: list[Block]) -> str:
    out: list[str] = []
    for b in blocks:
        if isinstance(b, Heading):
            out.append(f"{'#' * b.level} {b.text}")
        elif isinstance(b, Para):
            out.append(b.text)
        elif isinstance(b, Bullets):
            out.append("\n".join(f"- {item}" for item in b.items))
        elif isinstance(b, Table):
            sep = ["---:" if i in b.right else "---" for i in range(len(b.header))]
            lines = [b.header, sep, *b.rows]
            out.append("\n".join("| " + " | ".join(_md_cell(c) for c in line) + " |" for line in lines))
        elif isinstance(b, Image):
            out.append(f"![{b.alt}]({b.path})")
        elif isinstance(b, Code):
            out.append("```\n" + b.text.rstrip("\n") + "\n```")
    return "\n\n".join(out) + "\n"


_INLINE = re.compile(r"`([^`]+)`|\*\*([^*]+)\*\*")


def _inline(text: str) -> str:
    """Escape text, then turn `code` and **bold** into tags."""
    parts, pos = [], 0
    for m in _INLINE.finditer(text):
        parts.append(html.escape(text[pos : m.start()]))
        parts.append(f"<code>{html.escape(m[1])}</code>" if m[1] else f"<strong>{html.escape(m[2])}</strong>")
        pos = m.end()
    parts.append(html.escape(text[pos:]))
    return "".join(parts)


def _cell_class(text: str) -> str:
    for word in ("PASS", "FAIL", "INCONCLUSIVE"):
        if text == word or text.startswith(f"**{word}**"):
            return f' class="{word.lower()}"'
    return ""


def _html_table(b: Table) -> str:
    def row(cells: list[str], tag: str) -> str:
        tds = []
        for i, c in enumerate(cells):
            align = ' style="text-align:right"' if i in b.right else ""
            tds.append(f"<{tag}{align}{_cell_class(c)}>{_inline(c)}</{tag}>")
        return "<tr>" + "".join(tds) + "</tr>"

    body = "".join(row(r, "td") for r in b.rows)
    return f"<table><thead>{row(b.header, 'th')}</thead><tbody>{body}</tbody></table>"


def _data_uri(path: Path) -> str:
    return "data:image/png;base64," + base64.b64encode(path.read_bytes()).decode("ascii")


STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;
color:#1d1d1f;line-height:1.45}
table{border-collapse:collapse;margin:1em 0;font-size:0.92em}th,td{border:1px solid #ccd;padding:4px 8px}
th{background:#eef1f6}td.pass{background:#d9f2dd;font-weight:600}td.fail{background:#f8d7d7;font-weight:600}
td.inconclusive{background:#fff1c7;font-weight:600}img{max-width:100%;border:1px solid #dde;margin:0.5em 0}
pre{background:#f6f8fa;padding:0.8em;overflow-x:auto;white-space:pre-wrap}code{background:#f2f2f5;padding:0 3px}
"""


def to_html(blocks: list[Block], title: str, base: Path) -> str:
    """A single HTML file: every image is read from `base` and embedded as a data URI."""
    out = []
    for b in blocks:
        if isinstance(b, Heading):
            out.append(f"<h{b.level}>{_inline(b.text)}</h{b.level}>")
        elif isinstance(b, Para):
            out.append(f"<p>{_inline(b.text)}</p>")
        elif isinstance(b, Bullets):
            out.append("<ul>" + "".join(f"<li>{_inline(i)}</li>" for i in b.items) + "</ul>")
        elif isinstance(b, Table):
            out.append(_html_table(b))
        elif isinstance(b, Image):
            out.append(f'<img alt="{html.escape(b.alt)}" src="{_data_uri(base / b.path)}">')
        elif isinstance(b, Code):
            out.append(f"<pre>{html.escape(b.text)}</pre>")
    head = f'<meta charset="utf-8"><title>{html.escape(title)}</title><style>{STYLE}</style>'
    return f"<!DOCTYPE html>\n<html><head>{head}</head><body>\n" + "\n".join(out) + "\n</body></html>\n"
