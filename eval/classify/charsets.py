"""Whether a text may hold a character of a block of code points, from the lead bytes of its UTF-8 form: one encode
and two translates in C, a few times cheaper than a regex charset scan over text outside Latin-1 (curly quotes and
dashes make most non-ASCII prose UCS-2). A prefilter: False proves the block absent, True means "search it".

The lead byte of a character's UTF-8 form grows with its code point (C2-DF for two bytes, E0-EF for three, F0-F4
for four), so every character of [low, high] has a lead byte in [lead(low), lead(high)].
"""

from __future__ import annotations

from functools import cache

from eval.classify.compiled import speedups as _speedups

_NOT_LEAD = bytes(range(0xC2))  # ASCII and continuation bytes (C0 and C1 never occur)


def _lead(code_point: int) -> int:
    return (chr(code_point).encode("utf-8", "surrogatepass"))[0]


@cache
def _outside(low: int, high: int) -> bytes:
    """Every byte but the lead bytes of [low, high] (a translate deletes them)."""
    first, last = _lead(low), _lead(high)
    return bytes(b for b in range(256) if not first <= b <= last)


def may_hold(text: str, low: int, high: int) -> bool:
    """False only where `text` holds no character in [low, high] (code points >= 0x80); lone surrogates count as
    their code points. The compiled helper answers exactly (True only where such a character is: one pass over the
    code points, without encoding the text); the Python path from lead bytes (True also where only another character
    of the same lead bytes is). Every use tests a pattern of characters of [low, high] next, so both give the same
    verdicts (tests/unit/classify/test_fast_paths.py)."""
    if _speedups is not None:
        found: bool = _speedups.any_in(text, low, high)
        return found
    leads = text.encode("utf-8", "surrogatepass").translate(None, _NOT_LEAD)
    return bool(leads) and bool(leads.translate(None, _outside(low, high)))
