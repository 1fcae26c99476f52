"""Byte-level BPE (GPT-2 style) pieces leaking as text, e.g. `ĠreturnĠx` or `âĢĻ` for `’`.

Byte-level tokenizers map every byte to a visible character: printable Latin-1 bytes to themselves and the
other 68 (controls, space, 0x7F-0xA0, 0xAD) to U+0100-U+0143. A leaked piece therefore is a run of those
characters that, mapped back to bytes, is valid UTF-8 with a plausible meaning. Those same characters are
real letters in Polish, Czech, Maltese, Latvian, Turkish..., so a word counts only when:
  - every character of it is in the byte alphabet, and mapping it back gives strict UTF-8, and
  - the decoded text carries a signal a real word never does: a space or newline *inside* the word (`aĠb`),
    or a decoded multi-byte character in a common script (CJK, emoji, punctuation, accented Latin, Greek,
    basic Cyrillic). `PÓŁNOC` decodes to `PӟNOC` (a rare letter): no signal; `Ġunju` has its Ġ first: no signal.
"""

from __future__ import annotations

import re

from eval.classify.model import MAX_SPANS, Span, span_at


def _byte_alphabet() -> dict[str, int]:
    printable = list(range(0x21, 0x7F)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    mapping = {chr(b): b for b in printable}
    n = 0
    for b in range(256):
        if b not in printable:
            mapping[chr(0x100 + n)] = b
            n += 1
    return mapping


CHAR_TO_BYTE = _byte_alphabet()
# Characters that only a byte-level leak (or a real non-ASCII word) can put in a word: the fast path.
SUSPECT = re.compile("[\u00a1-\u00ac\u00ae-\u0143]")
_WORD = re.compile(r"\S+")
_INNER_SPACE = frozenset("\u0120\u010a\u0109")  # Ġ (space), Ċ (newline), ĉ (tab)


def _plausible(ch: str) -> bool:
    o = ord(ch)
    return (
        0x00C0 <= o <= 0x024F  # accented Latin
        or 0x0370 <= o <= 0x03FF  # Greek
        or 0x0400 <= o <= 0x045F  # basic Cyrillic
        or 0x2000 <= o <= 0x2BFF  # punctuation, arrows, symbols
        or 0x3000 <= o <= 0x9FFF  # CJK
        or 0xAC00 <= o <= 0xD7AF  # Hangul
        or 0xFF00 <= o <= 0xFFEF  # full-width forms
        or 0x1F000 <= o <= 0x1FAFF  # emoji
    )


def word_is_leak(word: str) -> str:
    """Why `word` is a leaked byte-level piece run ('' when it is not)."""
    try:
        raw = bytes(CHAR_TO_BYTE[c] for c in word)
    except KeyError:
        return ""  # a character outside the byte alphabet: real text
    if raw.isascii() and not any(c in _INNER_SPACE for c in word[1:]):
        return ""
    try:
        decoded = raw.decode("utf-8")
    except UnicodeDecodeError:
        return ""
    if any(ord(c) < 0x20 and c not in "\t\n\r" for c in decoded):
        return ""  # decodes to control characters: a real word in a Latin-Extended script
    if any(c in _INNER_SPACE for c in word[1:].rstrip("\u0120\u010a\u0109")):
        return f"byte-level pieces decode to {decoded[:40]!r}"
    if any(_plausible(c) for c in decoded if ord(c) > 0x7F):
        return f"byte-level pieces decode to {decoded[:40]!r}"
    return ""


def _in_backticks(text: str, start: int, word: str) -> bool:
    """The pieces are quoted in inline code (`` `ĠreturnĠx` ``): a model explaining byte-level BPE."""
    if word.count("`") >= 2:
        return True
    line_start = text.rfind("\n", 0, start) + 1
    return text.count("`", line_start, start) % 2 == 1


def bytelevel_spans(fieldname: str, text: str) -> list[Span]:
    """Words of `text` that are byte-level pieces (the caller has seen SUSPECT match)."""
    spans = []
    for m in _WORD.finditer(text):
        word = m.group()
        if word.isascii():
            continue
        why = word_is_leak(word)
        if why and not _in_backticks(text, m.start(), word):
            spans.append(span_at(fieldname, text, m.start(), m.end(), why))
            if len(spans) >= MAX_SPANS:
                break
    return spans
