"""Near-duplicate repetition: a sentence or a paragraph written again and again with a word changed each time
(`The fix is in the parser. ... The fix is in the lexer. ... The fix is in the loader.`), what a looping model
writes when its loop drifts: no exact period for `degenerate_repetition`'s region search to find, and a unit
longer than the 64-token window of the statistics in eval/classify/degeneracy.py.

The statistic `near_duplicates` counts the repetitions of the longest such drifting loop in a field's last READS
characters (fenced code left out), read as a sequence of segments (sentences, and paragraphs at blank lines): a
unit of 1 to MAX_UNIT consecutive segments, UNIT_WORDS words or more in all, written again back to back, where each
segment is near-identical to the one a unit before: the same number of words, the same first or last KEY_CHARS
characters (one changed word leaves one end intact), and word sets whose Jaccard similarity is at least
MIN_JACCARD. Only long prose segments count (MIN_SEGMENT_WORDS words or more, not code: eval/classify/degeneracy.py's
prose test). The count beyond which a field loops is calibrated on real clean text (`python -m
eval.classify.calibrate --update near_duplicates`, degeneracy.json: `near_duplicates`), not chosen.

The definition's shape was set on clean text only (no positive was looked at): near-identical segments *anywhere* in a
field, without the back-to-back and paragraph-size conditions, flagged 878 of 60,081 pieces of the Python standard
library and 581 of 26,474 pieces of gettext catalogs (lists of similar messages and similar functions are real);
back to back, prose only, units of 24 words or more: 31 and 41 (docs/trust/classifier.md, section Calibration).
"""

from __future__ import annotations

from functools import cache
from itertools import repeat
from operator import itemgetter

from eval.classify.compiled import speedups as _speedups
from eval.classify.degeneracy import _code_hint, _unfenced, calibrated, mostly_words

READS = 4096  # as the statistics of eval/classify/degeneracy.py: a loop runs to the end
MIN_SEGMENT_WORDS = 8
MIN_JACCARD = 0.8
MAX_UNIT = 4  # segments in the repeated unit (a paragraph of up to four sentences)
UNIT_WORDS = 24  # words in the unit: a paragraph, not a line of a list
KEY_CHARS = 16  # near-identical segments begin or end alike: one changed word leaves one end intact
_PREFIX = itemgetter(slice(0, KEY_CHARS))
_SUFFIX = itemgetter(slice(-KEY_CHARS, None))


def _segments(text: str) -> list[str]:
    """The segments of the last READS characters of `text`, fenced code left out: the pieces between sentence ends
    (`. `, `! `, `? `, a period at a line end, `。`, `！`, `？`) and blank lines, stripped of spaces and sentence marks;
    a single newline after a word does not end one (a paragraph hard-wrapped at a line width is one segment). Empty
    ones left out. Found by replacements and one split, in C."""
    tail = _unfenced(text[-READS:])
    for end in _ENDS:
        if end in tail:
            tail = tail.replace(end, ". ")
    return list(filter(None, map(str.strip, tail.split(". "), repeat(_EDGES))))


_ENDS = ("\n\n", "! ", "? ", ".\n", "\u3002", "\uff01", "\uff1f")
_EDGES = " \t\r\n.!?"


def near_duplicates(text: str, limit: float = -1.0) -> int:
    """How many times a unit of 1 to MAX_UNIT consecutive long prose segments, of UNIT_WORDS words or more in all, is
    written back to back with each segment near-identical to the one a unit before (module docstring); 1 without
    such a repeat, 0 without long segments. With `limit`, a text whose answer is at most `limit` may return early
    with a value <= `limit` (the classifier asks only whether the count is beyond its threshold)."""
    if limit >= 1.0 and _speedups is not None:  # `_keys_may_repeat(_segments(text), limit)`, counted in one pass of C
        m, prefixes, suffixes = _speedups.segment_keys(_unfenced(text[-READS:]), KEY_CHARS)
        if (m - prefixes) + (m - suffixes) < limit:
            return 0
    segments = _segments(text)
    if limit >= 1.0 and not _keys_may_repeat(segments, limit):
        return 0
    units = [(len(words), segment, frozenset(words)) for segment in segments if _long_prose(words := segment.split())]
    best = 1 if units else 0
    for period in range(1, MAX_UNIT + 1):
        run = 0
        for i in range(period, len(units)):
            if not _near(units[i], units[i - period]):
                run = 0
                continue
            run += 1
            if run // period + 1 > best and sum(u[0] for u in units[i - period + 1 : i + 1]) >= UNIT_WORDS:
                best = run // period + 1
    return best


def _long_prose(words: list[str]) -> bool:
    """MIN_SEGMENT_WORDS words or more, and prose as eval/classify/degeneracy.py reads it: no sign of code, or two
    thirds plain words."""
    if len(words) < MIN_SEGMENT_WORDS:
        return False
    segment = " ".join(words)
    return not _code_hint(segment) or mostly_words(segment, words)


def _near(a: tuple[int, str, frozenset[str]], b: tuple[int, str, frozenset[str]]) -> bool:
    """The same number of words, the same first or last KEY_CHARS characters, word sets within MIN_JACCARD."""
    if a[0] != b[0] or (a[1][:KEY_CHARS] != b[1][:KEY_CHARS] and a[1][-KEY_CHARS:] != b[1][-KEY_CHARS:]):
        return False
    return len(a[2] & b[2]) >= MIN_JACCARD * len(a[2] | b[2])


def _keys_may_repeat(segments: list[str], limit: float) -> bool:
    """Necessary for a count beyond `limit`: r segments chained by near-identity (r > limit) share their beginnings
    or their ends along r - 1 links, so the segments have at least r - 1 >= `limit` fewer distinct beginnings plus
    distinct ends than twice their number. Counted in C."""
    m = len(segments)
    return (m - len(set(map(_PREFIX, segments)))) + (m - len(set(map(_SUFFIX, segments)))) >= limit


@cache
def threshold() -> float:
    """The calibrated count (degeneracy.json, `near_duplicates`); beyond it a field loops. Missing: never fires."""
    return calibrated("near_duplicates", float("inf"))
