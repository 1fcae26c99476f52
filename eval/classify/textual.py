"""Character-level corruption: `replacement_char` (U+FFFD) and `byte_piece` (byte tokens or byte-level BPE
pieces leaking as text, lone surrogates). Clean ASCII text leaves through a fast path.

When the turn's token ids and a tokenizer are at hand, byte pieces are decided from the tokenizer: a text
suspect that the tokenizer's own decoding also produces is what the model really generated (a Maltese `Ġ`),
not a leak; byte-fallback tokens whose bytes are not valid UTF-8 are a leak even when the text hides them.
"""

from __future__ import annotations

import re
from itertools import islice
from typing import Any

from eval.classify.bytelevel import (
    LEAD_BYTE,
    LEAD_BYTE_RANGE,
    SUSPECT,
    SUSPECT_RANGE,
    bytelevel_spans,
    dropped_c1_spans,
    in_fence,
    names_markers,
)
from eval.classify.charsets import may_hold
from eval.classify.codepages import codepage_spans
from eval.classify.compiled import speedups as _speedups
from eval.classify.context import Context
from eval.classify.glued import glued_runs
from eval.classify.glued import threshold as glued_threshold
from eval.classify.model import MAX_SPANS, Span, Turn, span_at
from eval.classify.spacing import run_together_share, threshold
from eval.classify.splitwords import offset, spaced_gaps, spaced_letters, split_pieces
from eval.classify.splitwords import thresholds as split_thresholds

_FFFD_RUN = re.compile("\ufffd+")
_FFFD_ESCAPE = re.compile(r"(?<!\\)(?:\\\\)*\\u[fF]{3}[dD]")
_BYTE_TOKENS = re.compile(r"(?:<0x[0-9A-Fa-f]{2}>)+")
_BYTE_TOKEN = re.compile(r"<0x([0-9A-Fa-f]{2})>")
_SURROGATE = re.compile("[\ud800-\udfff]+")
_QUOTES = "\"'`"
RUN_TOGETHER_MIN_CHUNK = 24
# The run-together share reads the last 8 KB of a field (as the salad measure does): a detokenizer that drops the
# spaces does so to the end, and a 200 KB field of tables and URLs is not re-read whole on every turn.
RUN_TOGETHER_READS = 8192


def detect_replacement_char(turn: Turn, ctx: Context) -> list[Span]:
    spans: list[Span] = []
    for name, text in turn.fields:
        if text.isascii():
            if name.endswith(".arguments") and "\\u" in text:
                spans.extend(_spans(_FFFD_ESCAPE, name, text, ctx, "escaped U+FFFD in JSON arguments"))
            continue
        if "\ufffd" in text:
            named = _NAMES_FFFD.search(text) is not None
            spans.extend(_spans(_FFFD_RUN, name, text, ctx, "U+FFFD replacement character", named))
    return spans


# Text that names the character (`U+FFFD`, `replacement character`) discusses it: its examples in short quotes
# (`gives '�单' instead of "客单价"`) are quoted, not emitted. A detokenizer that emits U+FFFD does not name it.
_NAMES_FFFD = re.compile(r"U\+FFFD|\\ufffd|replacement char", re.IGNORECASE)
SHORT_QUOTE = 12


def _spans(pattern: re.Pattern[str], name: str, text: str, ctx: Context, why: str, named: bool = False) -> list[Span]:
    return [
        span_at(name, text, m.start(), m.end(), why)
        for m in islice(pattern.finditer(text), MAX_SPANS * 4)
        if not _copied_window(text, m.start(), m.end(), ctx)
        and not _discussed(text, m.start(), m.end())
        and not (named and in_short_quote(text, m.start(), m.end()))
    ]


def in_short_quote(text: str, start: int, end: int) -> bool:
    """Inside a pair of ASCII quotes on one line, at most SHORT_QUOTE characters either side (`'�单'`)."""
    for q in ("'", '"'):
        left = text.rfind(q, max(0, start - SHORT_QUOTE), start)
        right = text.find(q, end, end + SHORT_QUOTE)
        if left >= 0 and right >= 0 and "\n" not in text[left:right] and q not in text[left + 1 : start]:
            return True
    return False


def _discussed(text: str, start: int, end: int) -> bool:
    """The character alone in an inline code span (`` `�` ``), or alone in a string literal of a fenced code block
    (`"token": "�"` in data shown as code): the model names it, it does not emit it."""
    before, after = text[start - 1 : start], text[end : end + 1]
    if before == "`" and after == "`":
        return True
    return before in ("'", '"') and after == before and text.count("```", 0, start) % 2 == 1


_EDGE = "`'\"()[]{}<>,.;:!?"


def _glued_spans(name: str, text: str, ctx: Context) -> list[Span]:
    """Words glued a few at a time (eval/classify/glued.py), beyond the calibrated count; a run the conversation
    already holds (a name the user wrote) does not count."""
    runs = [(a, b, n) for a, b, n in glued_runs(text) if not ctx.history.contains(text[a:b])]
    total = sum(n for _, _, n in runs)
    if total <= glued_threshold():
        return []
    why = f"words glued together: {total} glue points (beyond {glued_threshold():.0f})"
    return [span_at(name, text, a, b, why) for a, b, _ in runs[:MAX_SPANS]]


_SPLIT_WHAT = {"split_pieces": "pieces of a word split by a space", "spaced_letters": "a word spelled letter by letter"}


def _split_spans(name: str, text: str, ctx: Context) -> list[Span]:
    """Words split by stray spaces (eval/classify/splitwords.py), beyond the calibrated values; pieces or letters the
    conversation already holds do not count."""
    if " " not in text or len(text) < 8:
        return []
    limits = split_thresholds()
    spans: list[Span] = []
    if (share := spaced_gaps(text)) > limits["spaced_gaps"] and not ctx.history.contains(text.strip()[-40:]):
        start = len(text) - len(text.lstrip())
        beyond = limits["spaced_gaps"]
        why = f"words split by stray spaces: {share:.2f} of the gaps doubled or before a mark (beyond {beyond:.2f})"
        spans.append(span_at(name, text, start, len(text.rstrip()), why))
    base = offset(text)
    for statistic, found in (("split_pieces", split_pieces(text)), ("spaced_letters", spaced_letters(text))):
        found = [(a, b, w) for a, b, w in found if not ctx.history.contains(text[base + a : base + b])]
        if len(found) > limits[statistic]:
            what = _SPLIT_WHAT[statistic]
            spans.extend(span_at(name, text, base + a, base + b, f"{what}: {w!r}") for a, b, w in found[:MAX_SPANS])
    return spans


def _new_spans(spans: list[Span], name: str, found: list[Span], text: str, ctx: Context) -> list[Span]:
    """`found` without the spans that overlap one of `spans` (the same mojibake found by another rule) or whose word
    the conversation holds."""
    taken = [(s.start, s.end) for s in spans if s.field == name]
    return [
        s
        for s in found
        if not any(a < s.end and s.start < b for a, b in taken) and not _copied_window(text, s.start, s.end, ctx)
    ]


def _copied_window(text: str, start: int, end: int, ctx: Context) -> bool:
    """The word around the match already appears in the conversation: the model is quoting a tool result."""
    if ctx.history.empty:
        return False
    left = max(text.rfind(" ", 0, start), text.rfind("\n", 0, start)) + 1
    right = min((i for i in (text.find(" ", end), text.find("\n", end)) if i >= 0), default=len(text))
    return ctx.history.contains(text[left:right].strip(_EDGE) or text[start:end])


def detect_byte_piece(turn: Turn, ctx: Context) -> list[Span]:
    spans: list[Span] = []
    for name, text in turn.text_fields():
        share = run_together_share(text[-RUN_TOGETHER_READS:]) if len(text) >= 2 * RUN_TOGETHER_MIN_CHUNK else None
        if share is not None and share > threshold() and not ctx.history.contains(text.strip()[-40:]):
            start = len(text) - len(text.lstrip())
            why = f"words run together: {share:.2f} of the text in long chunks (beyond {threshold():.2f})"
            spans.append(span_at(name, text, start, len(text.rstrip()), why))
        spans.extend(_glued_spans(name, text, ctx))
        spans.extend(_split_spans(name, text, ctx))
    for name, text in turn.fields:
        if "<0x" in text:
            spans.extend(_byte_token_spans(name, text, ctx))
        if text.isascii():
            continue
        if may_hold(text, *SUSPECT_RANGE) and SUSPECT.search(text) is not None:
            spans.extend(s for s in bytelevel_spans(name, text) if not ctx.history.contains(s.text))
        if may_hold(text, *LEAD_BYTE_RANGE) and LEAD_BYTE.search(text) is not None:
            spans.extend(s for s in dropped_c1_spans(name, text) if not _copied_window(text, s.start, s.end, ctx))
        if "\u2581" in text:
            spans.extend(_metaspace_spans(name, text, ctx))
        spans.extend(_new_spans(spans, name, codepage_spans(name, text), text, ctx))
        if _has_surrogate(text):
            spans.extend(
                span_at(name, text, m.start(), m.end(), "lone UTF-16 surrogate")
                for m in islice(_SURROGATE.finditer(text), MAX_SPANS)
            )
    if ctx.tokenizer is not None and turn.token_ids:
        return _decide_with_tokenizer(spans, turn.token_ids, ctx.tokenizer)
    return spans


def _has_surrogate(text: str) -> bool:
    """Whether `text` holds a UTF-16 surrogate: the one thing strict UTF-8 cannot encode (an encode in C is several
    times faster than the charset scan of `_SURROGATE` over text outside Latin-1; the compiled helper reads the code
    points without encoding)."""
    if _speedups is not None:
        found: bool = _speedups.any_in(text, 0xD800, 0xDFFF)
        return found
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


# SentencePiece's word marker `▁` (U+2581) rendered instead of a space (` ▁▁ three spaces`). The same character
# is a block element in sparklines (`▁▂▃▅▇`) and a separator inside DeepSeek tokens (`<｜tool▁sep｜>`, which
# `leaked_tool_xml` reports): a run next to another block element or inside `<｜...｜>` is not counted.
_METASPACE = re.compile("\u2581+")
_BLOCKS = frozenset("\u2582\u2583\u2584\u2585\u2586\u2587\u2588")


def _metaspace_spans(name: str, text: str, ctx: Context) -> list[Span]:
    spans = []
    for m in islice(_METASPACE.finditer(text), MAX_SPANS * 4):
        start, end = m.start(), m.end()
        if text[start - 1 : start] in _BLOCKS or text[end : end + 1] in _BLOCKS:
            continue
        opened = text.rfind("<\uff5c", 0, start)
        if opened >= 0 and text.find("\uff5c>", opened) >= end and "\n" not in text[opened:start]:
            continue  # inside a full-width special token
        line_start = text.rfind("\n", 0, start) + 1
        if ctx.history.contains(m.group()) or text.count("`", line_start, start) % 2 == 1:
            continue  # copied, or quoted in inline code
        before = text[start - 1] if start else ""
        if (not before or before.isspace() or before in _QUOTES) and in_fence(text, start):
            continue  # a tokenizer's pieces shown as code (`▁A ▁Republican`, `'▁is'`)
        if _named_marker(text, start, end):
            continue  # an example of a text that discusses the marker
        if before and before in _QUOTES and text[end : end + 1] == before:
            continue  # named in a string literal (`piece.replace('▁', ' ')`), a piece shown as code (`'▁is'`)
        if _in_code_string(text, line_start, start):
            continue  # inside a string literal of code that keeps its spaces (`sp.encode("abc▁d d")`)
        spans.append(span_at(name, text, start, end, "SentencePiece word marker (U+2581) as text"))
    return spans


def _named_marker(text: str, start: int, end: int) -> bool:
    """In a text that names the markers (`names_markers`): inside a fenced block, or standing alone between
    spaces (`use ▁ as space`: the marker named as a word, not written in place of one)."""
    if not names_markers(text):
        return False
    alone = text[start - 1 : start] in ("", " ") and text[end : end + 1] in ("", " ")
    return alone or in_fence(text, start)


def _in_code_string(text: str, line_start: int, at: int) -> bool:
    """Position `at` lies inside a string literal on a line of a fenced block whose other characters keep their
    spaces: code that names the marker. A leak replaces the spaces themselves, so its line has none left."""
    line_end = text.find("\n", at)
    line = text[line_start : line_end if line_end >= 0 else len(text)]
    if " " not in line or not in_fence(text, at):
        return False
    before = text[line_start:at]
    return any((before.count(q) - before.count("\\" + q)) % 2 == 1 for q in _QUOTES if q != "`")


def _byte_token_spans(name: str, text: str, ctx: Context) -> list[Span]:
    spans = []
    for m in islice(_BYTE_TOKENS.finditer(text), MAX_SPANS * 4):
        start, end = m.start(), m.end()
        before = text[start - 1] if start else ""
        after = text[end] if end < len(text) else ""
        if before and before in _QUOTES and after == before:
            continue  # a string literal in code that handles byte tokens
        if ctx.history.contains(m.group()):
            continue
        if in_fence(text, start) and names_markers(text):
            continue  # the text names byte tokens in inline code: its fenced block shows them as an example
        spans.append(span_at(name, text, start, end, "byte token(s) as text"))
    return spans


def _decide_with_tokenizer(spans: list[Span], ids: list[int], tokenizer: Any) -> list[Span]:
    tokens = tokens_of(tokenizer, ids)
    decoded = decode_of(tokenizer, ids)
    if decoded is not None:
        spans = [s for s in spans if s.detail.startswith("lone") or s.text not in decoded]
    if tokens is not None:
        spans.extend(_invalid_byte_runs(tokens))
    return spans


def _invalid_byte_runs(tokens: list[str]) -> list[Span]:
    """Runs of byte-fallback tokens (`<0xE2>`) whose bytes are not valid UTF-8: rendered as U+FFFD or dropped."""
    spans = []
    i = 0
    while i < len(tokens):
        if _BYTE_TOKEN.fullmatch(tokens[i] or "") is None:
            i += 1
            continue
        j = i
        while j < len(tokens) and _BYTE_TOKEN.fullmatch(tokens[j] or "") is not None:
            j += 1
        raw = bytes(int(t[3:5], 16) for t in tokens[i:j])
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            spans.append(Span("token_ids", i, j, "".join(tokens[i:j])[:200], "byte tokens are not valid UTF-8"))
        i = j
    return spans


def tokens_of(tokenizer: Any, ids: list[int]) -> list[str] | None:
    """Token strings from a transformers tokenizer (`convert_ids_to_tokens`) or a `tokenizers.Tokenizer`."""
    try:
        if hasattr(tokenizer, "convert_ids_to_tokens"):
            out = tokenizer.convert_ids_to_tokens(list(ids))
        elif hasattr(tokenizer, "id_to_token"):
            out = [tokenizer.id_to_token(i) for i in ids]
        else:
            return None
    except Exception:  # an id outside the vocabulary is itself a sign of trouble, not a crash
        return None
    return [t if isinstance(t, str) else "" for t in out]


def decode_of(tokenizer: Any, ids: list[int]) -> str | None:
    try:
        out = tokenizer.decode(list(ids))
    except Exception:
        return None
    return out if isinstance(out, str) else None
