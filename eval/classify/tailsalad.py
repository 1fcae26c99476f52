"""Word salad at the end of a long field (classifier 1.14.0): a reply or a reasoning that starts as sound prose and
ends in common English words in an order no sentence has (`… and like to been and sa p I less millions the three
is ( other your the and of will on been they which the …`), what a model emits when its logits go wrong midway.
eval/classify/wordpairs.py's `implausible_pairs` finds such salad in a short field (MAX_WORDS words or fewer); a
longer field it leaves alone, so the same salad after a few paragraphs went unseen.

The statistic `tail_pairs` is `implausible_pairs` of a long field's last *stretch*: what follows the last sentence end
(`.`, `?` or `!` then a blank or a line break) in the field's last READS characters, read only where that stretch
holds more than WINDOW words (one full window of pair scores: a salad writes no sentence end, while sound prose ends
a sentence every few dozen words) on lines of MIN_LINE_WORDS words or more on average (not a list of imports or of
labels, one or two words a line). The stretch test is also the gate: one regular expression that backtracks from the
end of the field's last READS characters to the last sentence end, and two `str.count` on the stretch, in C; almost
every field leaves there (47 of the 5,968 clean dev fields of the corpus, 15 of its 2,379 `test` fields hold such a
stretch), and only the others are tokenized and scored.
0.0 where the field has MAX_WORDS words or fewer, where the stretch is shorter, and wherever `implausible_pairs` has
none. The value below which a field is salad is calibrated on real clean text (`python -m eval.classify.calibrate
--alpha 0 --update tail_pairs`, degeneracy.json: the dev split's clean fields and the gettext catalogs' pieces),
not chosen.
"""

from __future__ import annotations

import re
from functools import cache

from eval.classify.compiled import speedups as _speedups
from eval.classify.degeneracy import calibrated
from eval.classify.wordpairs import MAX_WORDS, READS, WINDOW, implausible_pairs

_LAST_SENTENCE_END = re.compile(r".*[.?!]\s", re.S)  # the definition; `_last_sentence_end` finds its end by rfind
MIN_LINE_WORDS = 6  # words a line of the stretch holds on average, as salad.py's prose lines: not a list or code


def last_stretch(text: str) -> str | None:
    """The end of `text` after its last sentence end within READS characters, when it holds more than WINDOW words
    on lines of MIN_LINE_WORDS words on average (None otherwise); with no sentence end there, the last READS
    characters from a word's start."""
    tail = text[-READS:]
    if (end := _last_sentence_end(tail)) >= 0:
        tail = tail[end:]
    elif len(text) > READS:
        tail = tail[tail.find(" ") + 1 :]  # not from inside a word
    if tail.count(" ") + tail.count("\n") < WINDOW:
        return None  # the gate: fewer blanks than a window's words need (most fields)
    need = max(WINDOW + 1, MIN_LINE_WORDS * (tail.strip().count("\n") + 1))
    if not _more_words(tail, need - 1):
        return None  # short lines: a list, a table or code
    return tail


def _last_sentence_end(tail: str) -> int:
    """`_LAST_SENTENCE_END.match(tail).end()`, or -1 without a match: just past the last `.`, `?` or `!` followed by
    whitespace (`str.isspace`, the `\\s` of a str pattern), found by `str.rfind` from the end instead of the regex's
    backtracking over every character (the same position; tests/unit/classify/test_fast_paths.py)."""
    best = -1
    for mark in ".?!":
        at = tail.rfind(mark, 0, len(tail) - 1)
        while at > best and not tail[at + 1].isspace():
            at = tail.rfind(mark, 0, at)
        best = max(best, at)
    return best + 2 if best >= 0 else -1


def _more_words(text: str, limit: int) -> bool:
    """len(text.split(maxsplit=limit)) > limit: counted in C where the compiled helpers are built (no strings made)."""
    if _speedups is not None:
        over: bool = _speedups.words_over(text, limit)
        return over
    return len(text.split(maxsplit=limit)) > limit


def tail_pairs(text: str) -> float:
    """`implausible_pairs` of the last stretch of a field of more than MAX_WORDS words (module docstring); else 0.0."""
    stretch = last_stretch(text)
    if stretch is None or not _more_words(text, MAX_WORDS):
        return 0.0  # no long stretch (most fields), or a short field: implausible_pairs' own
    return implausible_pairs(stretch)


@cache
def threshold() -> float:
    """The calibrated value (degeneracy.json) below which a long field ends in salad; a missing entry never fires."""
    return calibrated("tail_pairs", float("-inf"))
