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
from collections.abc import Iterator
from itertools import islice

from eval.classify.compiled import speedups as _speedups
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
SUSPECT_RANGE = (0xA1, 0x143)  # the code points SUSPECT spans (eval.classify.charsets prefilter)
# A word (a run of non-space characters) that holds a non-ASCII character: the only words `bytelevel_spans` reads,
# found in C (the lookbehind starts a match only at a word's start, the lazy run stops at its first such character).
_NON_ASCII_WORD = re.compile(r"(?<!\S)\S*?[^\s\x00-\x7f]\S*")
_NON_ASCII_CHAR = re.compile(r"[^\s\x00-\x7f]")
_WORD_REST = re.compile(r"\S*")


def non_ascii_words(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each match of `_NON_ASCII_WORD` in `text`, in order: the words (runs of non-space
    characters) that hold a non-ASCII character. Found from those characters (a charset scan in C) instead of
    trying the lookbehind at every position: each word is widened from its first such character. The compiled
    helper does the same in one pass (a text of many non-ASCII characters is not read one match at a time)."""
    if _speedups is not None:
        words: list[tuple[int, int]] = _speedups.non_ascii_words(text)
        return iter(words)
    return _non_ascii_words(text)


def _non_ascii_words(text: str) -> Iterator[tuple[int, int]]:
    end = 0
    for m in _NON_ASCII_CHAR.finditer(text):
        i = m.start()
        if i < end:
            continue  # in the word just reported
        start = i
        while start > end and not text[start - 1].isspace():
            start -= 1
        match = _WORD_REST.match(text, i)
        end = match.end() if match is not None else i + 1
        yield start, end


# Ġ (space), Ċ (newline). Not ĉ (tab): an Esperanto letter (`Masaĉuseco`), and tabs inside words do not leak.
_INNER_SPACE = frozenset("\u0120\u010a")


def _plausible(ch: str) -> bool:
    o = ord(ch)
    return (
        # Latin-1 signs (`°`, `£`, `©`, `«`) and accented Latin; not U+01C0-U+024F (Turkish `Çık` decodes to `Ǐk`)
        0x00A1 <= o <= 0x01BF
        or 0x0370 <= o <= 0x03FF  # Greek
        or 0x0400 <= o <= 0x045F  # basic Cyrillic
        or 0x2000 <= o <= 0x2BFF  # punctuation, arrows, symbols
        or 0x3000 <= o <= 0x9FFF  # CJK
        or 0xAC00 <= o <= 0xD7AF  # Hangul
        or 0xFF00 <= o <= 0xFFEF  # full-width forms
        or 0x1F000 <= o <= 0x1FAFF  # emoji
    )


def _cp1252_alphabet() -> dict[str, int]:
    """Each byte as Windows-1252 shows it (the five bytes it leaves undefined as Latin-1 does): UTF-8 read as
    Windows-1252 is the mojibake of `â€™` for `’` and `Ã©` for `é`."""
    mapping = {chr(b): b for b in range(0x80)}
    for b in range(0x80, 0x100):
        try:
            mapping[bytes((b,)).decode("cp1252")] = b
        except UnicodeDecodeError:
            mapping[chr(b)] = b
    return mapping


CP1252_TO_BYTE = _cp1252_alphabet()
# Characters only Windows-1252 has (bytes 0x80-0x9F): the mark of its mojibake beside the Latin-1 one.
_CP1252_ONLY = frozenset(c for c in CP1252_TO_BYTE if ord(c) > 0xFF)


def word_is_leak(word: str) -> str:
    """Why `word` is a leaked byte-level piece run ('' when it is not)."""
    try:
        raw = bytes(CHAR_TO_BYTE[c] for c in word)
    except KeyError:
        return _mojibake(word)  # a character outside the byte alphabet: real text, or Windows-1252 mojibake
    if raw.isascii() and not any(c in _INNER_SPACE for c in word[1:]):
        return ""
    try:
        decoded = raw.decode("utf-8")
    except UnicodeDecodeError:
        return ""
    if any(ord(c) < 0x20 and c not in "\t\n\r" for c in decoded):
        return ""  # decodes to control characters: a real word in a Latin-Extended script
    if _inner_marker(word) or _glued_trailing_marker(word) or _only_markers(word):
        return f"byte-level pieces decode to {decoded[:40]!r}"
    if any(_plausible(c) for c in decoded if ord(c) > 0x7F):
        return f"byte-level pieces decode to {decoded[:40]!r}"
    return ""


def _mojibake(word: str) -> str:
    """UTF-8 read as Windows-1252 (`Thatâ€™s`, `â€"`): the word holds a character only Windows-1252 has, maps
    back to strict UTF-8 and decodes to a character of a common script. Real words never decode: `café` is
    not UTF-8 as bytes, `Zażółć` has letters Windows-1252 lacks."""
    if _CP1252_ONLY.isdisjoint(word):
        return ""
    try:
        decoded = bytes(CP1252_TO_BYTE[c] for c in word).decode("utf-8")
    except (KeyError, UnicodeDecodeError):
        return ""
    if any(_plausible(c) for c in decoded if ord(c) > 0x7F):
        return f"UTF-8 read as Windows-1252: decodes to {decoded[:40]!r}"
    return ""


def _only_markers(word: str) -> bool:
    """`ĊĊ`, `ĠĠĠĠ`: two or more space/newline markers and nothing else (no word of any language)."""
    return len(word) >= 2 and all(c in _INNER_SPACE for c in word)


def _inner_marker(word: str) -> bool:
    """A space/newline marker inside the word (`aĠb`), except a capital after Maltese's article hyphen or
    apostrophe (`il-Ġermanja`, `l-Ċentru`, `b'Ġenerazzjoni`)."""
    core = word.rstrip("\u0120\u010a")
    for i in range(1, len(core)):
        if core[i] in _INNER_SPACE and not (core[i - 1] in "-'\u2019" and core[i + 1 : i + 2].islower()):
            return True
    return False


def _glued_trailing_marker(word: str) -> bool:
    """`Done.ĊĊ`, `worldĠ`: a space or newline marker ending a word after a lowercase ASCII letter, a digit or
    ASCII punctuation. Maltese writes Ġ and Ċ as capitals at the start of words or inside capitalised ones,
    never glued after punctuation or a lowercase letter."""
    core = word.rstrip("\u0120\u010a")
    if core == word or not core:
        return False
    last = core[-1]
    return last.isascii() and (last.islower() or last.isdigit() or not last.isalnum())


# A real space, then a space marker, then a lowercase ASCII word (`The Ġcapital Ġof ĠFrance`): pieces whose
# marker was kept beside the space it encodes. Maltese words start with Ġ/Ċ too (`Ġermanja`), so it takes
# several of them in a text without Maltese's lowercase letters (ċ ġ ħ ż).
_LEADING_MARKER = re.compile(r"(?<=\s)[\u0120\u010a][A-Za-z][a-z]*\b")
LEADING_MARKERS_MIN = 3
_MALTESE_LOWER = frozenset("\u010b\u0121\u0127\u017c")


def _leading_marker_spans(fieldname: str, text: str) -> list[Span]:
    if "\u0120" not in text and "\u010a" not in text:
        return []
    found = []
    for m in _LEADING_MARKER.finditer(text):
        if not _in_backticks(text, m.start(), m.group()):
            found.append(m)
            if len(found) >= MAX_SPANS:
                break
    if len(found) < LEADING_MARKERS_MIN or not _MALTESE_LOWER.isdisjoint(text):
        return []
    why = "space markers of byte-level pieces before words"
    return [span_at(fieldname, text, m.start(), m.end(), why) for m in found]


# A code fence written with newline markers (```jsonĊ{ĊĠĠ"name"…): the fence is part of the leak, not quoting.
_MARKED_FENCE = re.compile("(?:```|~~~)[\\w+-]*\u010a|\u010a(?:```|~~~)")


def _in_backticks(text: str, start: int, word: str) -> bool:
    """The pieces are quoted in inline code (`` `ĠreturnĠx` ``): a model explaining byte-level BPE."""
    if _MARKED_FENCE.search(word):
        return False
    if word.count("`") >= 2:
        return True
    line_start = text.rfind("\n", 0, start) + 1
    return text.count("`", line_start, start) % 2 == 1


# A marker or a mojibake pair named in quotes or brackets (`text.replace("Ġ", " ")`, `turns "Ã©" back into "é"`,
# `a space becomes \u0120 (Ġ)`): code and explanations name one piece at a time; a leak runs through words.
_PIECE_CHARS = "".join(sorted({c for c in (*CHAR_TO_BYTE, *CP1252_TO_BYTE) if ord(c) > 0x7F}))
_PIECE = "[" + re.escape(_PIECE_CHARS) + "\u2581]{1,4}"
_NAMED_PIECE = re.compile("|".join(f"{re.escape(a)}{_PIECE}{re.escape(b)}" for a, b in ('""', "''", "()", "[]")))


def _unquoted(word: str) -> str:
    """The word without the pieces it names in quotes or brackets."""
    return _NAMED_PIECE.sub("", word) if ("'" in word or '"' in word or "(" in word or "[" in word) else word


_FENCE_LINE = re.compile(r"^[ \t]*(?:```|~~~)", re.M)
_QUOTES = "'\""


def _quoted_in_fence(text: str, start: int, word: str) -> bool:
    """A string literal in a fenced block (`['Se', 'Ã¡n', 'ĠMurray']`: a tokenizer's pieces shown as code)."""
    core = word.rstrip(",;:)]}")
    if len(core) < 3 or core[0] not in _QUOTES or core[-1] != core[0]:
        return False
    return in_fence(text, start)


def in_fence(text: str, at: int) -> bool:
    """Position `at` of `text` lies inside a fenced code block (an odd number of fence lines before it)."""
    return ("```" in text or "~~~" in text) and len(_FENCE_LINE.findall(text, 0, at)) % 2 == 1


# UTF-8 of CJK read as Latin-1 by a page or a client that then drops the C1 controls (bytes 0x80-0x9F): what is left
# of each character is its lead byte, a letter à-ï, and maybe a sign of U+00A0-U+00BF (`私` E7 A7 81 -> `ç§`, `ぞ`
# E3 81 9E -> `ã`). Standing between CJK characters (`こんにちは！ç§の名前`: the characters around decoded right),
# such a remnant has no other reading: no language writes à-ï glued between ideographs or kana. Counted from two.
_CJK_CLASS = "\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uff00-\uffef"
_DROPPED_C1 = re.compile(f"(?<=[{_CJK_CLASS}])(?:[\u00e0-\u00ef][\u00a0-\u00bf]{{0,2}})+(?=[{_CJK_CLASS}])")
DROPPED_C1_MIN = 2
LEAD_BYTE = re.compile("[\u00e0-\u00ef]")  # the fast path: a text without these holds no such remnant
LEAD_BYTE_RANGE = (0xE0, 0xEF)  # the code points LEAD_BYTE spans (eval.classify.charsets prefilter)


def dropped_c1_spans(fieldname: str, text: str) -> list[Span]:
    """Remnants of CJK mojibake whose C1 bytes were dropped, where there are DROPPED_C1_MIN or more."""
    found = list(islice(_DROPPED_C1.finditer(text), MAX_SPANS))
    if len(found) < DROPPED_C1_MIN:
        return []
    why = "UTF-8 of CJK read as Latin-1, its C1 bytes dropped"
    return [span_at(fieldname, text, m.start(), m.end(), why) for m in found]


# A text that names a tokenizer's markers in inline code (`` `Ġ` ``, `` `▁Once` ``) or by code point (`U+0120`)
# discusses them: the markers in its fenced blocks are examples it shows (`before: Hello!ĠHowĠcan…` in a pull
# request that fixes the leak), and a marker standing alone between spaces is one it names (`use ▁ as space`). A
# detokenizer that leaks them writes no inline code about them. Byte tokens (`<0xE2>`) follow the same rule.
_NAMES_MARKER = re.compile(
    "(?<!`)`[^`\n]*[\u0120\u010a\u0109\u2581][^`\n]*`(?!`)"
    r"|(?<!`)`[^`\n]*<0x[0-9A-Fa-f]{2}>[^`\n]*`(?!`)|U\+(?:0120|010[Aa]|2581)\b"
)


def names_markers(text: str) -> bool:
    """Whether `text` names byte-level or SentencePiece markers, or byte tokens, in inline code or by code point."""
    return ("`" in text or "U+" in text) and _NAMES_MARKER.search(text) is not None


def bytelevel_spans(fieldname: str, text: str) -> list[Span]:
    """Words of `text` that are byte-level pieces (the caller has seen SUSPECT match)."""
    spans = []
    named = None
    for start, end in non_ascii_words(text):
        word = text[start:end]
        why = word_is_leak(_unquoted(word))
        if why and not _in_backticks(text, start, word) and not _quoted_in_fence(text, start, word):
            if named is None:
                named = ("```" in text or "~~~" in text) and names_markers(text)
            if named and in_fence(text, start):
                continue  # an example in a text that discusses the markers
            spans.append(span_at(fieldname, text, start, end, why))
            if len(spans) >= MAX_SPANS:
                break
    return spans or _leading_marker_spans(fieldname, text)
