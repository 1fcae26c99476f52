"""Mojibake of the single-byte code pages in use (classifier 1.12.0): UTF-8 bytes shown through a code page one byte
a character, by a console, a client or a proxy that picked the wrong encoding. `┬┐C├│mo est├ís?` is the UTF-8 of
`¿Cómo estás?` read as the DOS code page 850 or 437; `Ø³Ù„Ø§Ù…` is Persian read as Windows-1252; `Ð¿Ñ€Ð¸Ð²ÐµÑ‚`,
`РїСЂРёРІРµС‚` are Russian read as Latin-1 and as Windows-1251.

A run of non-ASCII characters (nothing else: these code pages put every byte of 0x80-0xFF on a non-ASCII character)
that maps back, through one code page, to bytes that are valid UTF-8 as a whole and decode to multi-byte characters
of a written script is such mojibake. Real text in these code pages' own letters is not UTF-8 as bytes (`café`,
`Привет`, `Zażółć`: a lead byte must be followed by continuation bytes, which these alphabets place on rare
letters), and box-drawing trees (`├──`, `│`, `└─`) are not either (`─` is a lead byte that no `─` can follow). Where
they are (cp866 puts Russian `р`-`я` on the lead bytes E0-EF and `а`-`п` on continuation bytes: `ход` is the UTF-8 of
`室`), the run is a word of the code page's letters, cased as words are, and is not read. A field counts where its
runs decode to at least MIN_DECODED different characters of the common scripts in one code page (one stray pair in
real text, repeated, is not enough: `č` + NBSP + `–` in a Czech catalog is the UTF-8 of one ideograph), outside
inline code and string literals of fenced code.
"""

from __future__ import annotations

import re
from functools import cache

from eval.classify.compiled import speedups as _speedups
from eval.classify.model import MAX_SPANS, Span, span_at

CODE_PAGES = ("cp1252", "latin-1", "cp437", "cp850", "cp866", "cp1250", "cp1251", "koi8-r", "mac_roman")
MIN_DECODED = 2  # different decoded multi-byte characters in a field, in one code page
MIN_RUN = 2
_RUN = re.compile(rf"[^\x00-\x7f]{{{MIN_RUN},}}")


@cache
def _tables() -> tuple[tuple[str, dict[str, int], frozenset[str]], ...]:
    """Per code page: each character of bytes 0x80-0xFF and its byte (a byte the code page leaves undefined is its
    Latin-1 character, as decoders that do not fail show it), and the characters of the UTF-8 lead bytes C2-F4."""
    out = []
    for page in CODE_PAGES:
        table: dict[str, int] = {}
        for b in range(0x80, 0x100):
            try:
                char = bytes((b,)).decode(page)
            except UnicodeDecodeError:
                char = chr(b)
            table.setdefault(char, b)
        leads = frozenset(c for c, b in table.items() if 0xC2 <= b <= 0xF4)
        out.append((page, table, leads))
    return tuple(out)


def _written(ch: str) -> bool:
    """A character of the common letters and punctuation people write (what mojibake decodes back to); not the rare
    blocks (Cyrillic supplements, Latin Extended-B, arrows, CJK Extension A) that real text happens to decode to."""
    o = ord(ch)
    return (
        0x00A1 <= o <= 0x017F  # Latin-1 signs, accented Latin
        or 0x0370 <= o <= 0x03FF  # Greek
        or 0x0400 <= o <= 0x045F  # basic Cyrillic
        or 0x05D0 <= o <= 0x05EA  # Hebrew letters
        or 0x0600 <= o <= 0x06FF  # Arabic (Persian, Urdu)
        or 0x0900 <= o <= 0x0E7F  # Indic scripts, Thai
        or 0x2010 <= o <= 0x2044  # dashes, quotes, bullets, ellipsis
        or o == 0x20AC  # euro sign
        or 0x3000 <= o <= 0x30FF  # CJK punctuation, kana
        or 0x4E00 <= o <= 0x9FFF  # CJK ideographs
        or 0xAC00 <= o <= 0xD7AF  # Hangul
        or 0x1F300 <= o <= 0x1FAFF  # emoji
    )


def _wordlike(run: str) -> bool:
    """A word of the code page's own letters, cased as words are (`ход`, `Ці`, `ВСЁ`): real text, whatever its bytes
    decode to. Mojibake mixes signs, box drawing or cases inside a word (`├│`, `Ø³Ù„`, `РїСЂ`)."""
    return run.isalpha() and (run.islower() or run.isupper() or (run[0].isupper() and run[1:].islower()))


def _decode(run: str, table: dict[str, int]) -> str:
    """The run's bytes in the code page as UTF-8 ('' where a character is not of the code page or the bytes are not
    valid UTF-8 as a whole)."""
    try:
        return bytes(table[c] for c in run).decode("utf-8")
    except (KeyError, UnicodeDecodeError):
        return ""


def codepage_runs(text: str) -> tuple[str, list[tuple[int, int, str]]]:
    """(code page, [(start, end, decoded)]) of the first code page whose runs in `text` decode to MIN_DECODED or more
    different written multi-byte characters; ('', []) where none does."""
    runs = [(a, b, text[a:b]) for a, b in non_ascii_runs(text)]
    runs = [(a, b, run) for a, b, run in runs if not _wordlike(run)]
    if not runs:
        return "", []
    for page, table, leads in _tables():
        found = []
        decoded_chars: set[str] = set()
        for a, b, run in runs:
            if run[0] not in leads:
                continue
            decoded = _decode(run, table)
            written = sum(_written(c) for c in decoded)
            if written and written == len(decoded):
                found.append((a, b, decoded))
                decoded_chars.update(decoded)
        if len(decoded_chars) >= MIN_DECODED:
            return page, found
    return "", []


def non_ascii_runs(text: str) -> list[tuple[int, int]]:
    """(start, end) of each run of MIN_RUN or more non-ASCII characters (the matches of `_RUN`, which the regex engine
    tries at every position), in order. In one pass of C where the compiled helpers are built."""
    if _speedups is not None:
        return _speedups.non_ascii_runs(text, MIN_RUN)
    return [m.span() for m in _RUN.finditer(text)]


def codepage_spans(fieldname: str, text: str) -> list[Span]:
    """Mojibake runs of one code page (module docstring), outside inline code and fenced string literals."""
    from eval.classify.bytelevel import _in_backticks

    page, found = codepage_runs(text)
    if not page:
        return []
    kept = [(a, b, d) for a, b, d in found if not _in_backticks(text, a, text[a:b])]
    kept = [(a, b, d) for a, b, d in kept if not _in_string(text, a, b)]
    if len({c for _, _, d in kept for c in d}) < MIN_DECODED:
        return []
    why = f"UTF-8 read as {page}: decodes to "
    return [span_at(fieldname, text, a, b, why + repr(d[:40])) for a, b, d in kept[:MAX_SPANS]]


def _in_string(text: str, start: int, end: int) -> bool:
    """Inside a string literal of a fenced block (`'┬┐'` in a test of an encoder): code naming the mojibake."""
    from eval.classify.bytelevel import in_fence

    if not in_fence(text, start):
        return False
    line_start = text.rfind("\n", 0, start) + 1
    return any(text.count(q, line_start, start) % 2 == 1 for q in "\"'")
