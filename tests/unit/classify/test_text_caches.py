"""The per-text verdict caches of `degenerate_repetition` (eval/classify/repetition.py) change no verdict."""

from __future__ import annotations

from pydoc_data.topics import topics

from eval.classify.degeneracy import degenerate, statistics
from eval.classify.repetition import SHORT_TAIL, STATISTICS_READS, _prose_degenerate, clear_text_caches, short_region

PROSE = "The parser reads the file and returns the tree, then the checker walks it once. "
LOOP = "is " * 20
REFERENCE = topics["assert"] + topics["assignment"]  # real prose, longer than what the statistics read


def test_short_region_offsets_are_into_the_whole_text_cached_or_not() -> None:
    clear_text_caches()
    for text in (LOOP, PROSE * 40 + LOOP, "x" + PROSE * 40 + LOOP):
        first, again = short_region(text), short_region(text)  # the second comes from the cache
        assert first is not None and first == again
        assert first.end >= len(text) - 1 and (len(text) > SHORT_TAIL) == (first.start > SHORT_TAIL)
        assert text[first.start : first.end].strip() == LOOP.strip()


def test_a_tail_and_its_whole_text_share_a_verdict() -> None:
    clear_text_caches()
    verdicts = []
    for text in (REFERENCE, REFERENCE + "the the the the of of of and and and " * 3):
        whole = bool(degenerate(statistics(text, compression=False)))
        assert _prose_degenerate(text[-STATISTICS_READS:]) is whole
        assert _prose_degenerate(text[-STATISTICS_READS:]) is whole  # cached
        verdicts.append(whole)
    assert verdicts == [False, True]
    assert _prose_degenerate.cache_info().hits == 2
