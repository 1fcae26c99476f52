"""Short salads of function words and fragments (classifier 1.11.0, eval/classify/wordpairs.py): common English words
in an order no sentence has, too short for the 64-token statistics, found by the pairs of adjacent words that real
English never or rarely writes. The clean replies are short and terse in the ways real traffic is.

Every example is written for these tests (no third-party text)."""

from __future__ import annotations

import math

import pytest

from eval.classify.salad import thresholds
from eval.classify.wordpairs import implausible_pairs, table
from tests.unit.classify.helpers import labels, message

ONE_LINE = "the of and to been a sa p I less the three is ( other your the will are for on em it a"
FIVE_LINES = (
    "Configure version of your team' your the setup\n"
    "to fix the response a / I can' for request,\n"
    "the of your a install to\n"
    "your the version for a\n"
    "request the to a"
)
WITH_A_SLASH = "Please the report a / our it on send ed for the can' this will by me the data is ( were on as"


def _limit() -> float:
    return thresholds()["implausible_pairs"]


def test_the_threshold_is_calibrated():
    assert -math.inf < _limit() < 0.0


def test_english_word_pairs_score_above_pairs_english_never_writes():
    _, scores, left, right = table()
    assert scores[("of", "the")] > 1.0
    assert scores[("to", "be")] > 1.0
    for pair in (("to", "been"), ("your", "the"), ("the", "of")):
        unseen = -math.log(left[pair[0]] * right[pair[1]] + 1)
        assert scores.get(pair, unseen) < -2.0, pair


@pytest.mark.parametrize("text", [ONE_LINE, FIVE_LINES, WITH_A_SLASH], ids=["one-line", "five-lines", "slash"])
def test_a_short_function_word_salad_is_degenerate_repetition(text):
    assert implausible_pairs(text) < _limit()
    assert "degenerate_repetition" in labels(message(text), "auto")


def test_the_salad_is_found_in_reasoning_too():
    assert "degenerate_repetition" in labels(message("Done.", reasoning=ONE_LINE), "auto")


CLEAN = {
    "review": "LGTM, but please rename the helper before merging. The tests look fine to me.",
    "nit": "Nit: this could be a one-liner. Otherwise looks good, thanks for the quick fix!",
    "list": "- bump version to 1.2\n- fix the flaky test\n- update the changelog\n- drop support for the old config",
    "commit": "fix(parser): handle empty input in the tokenizer\n\nThe tokenizer crashed on an empty string; return an"
    " empty list instead of raising.",
    "non-native": "Yesterday I have tried to install the package but it give me error, maybe is problem with the"
    " version of python? Please can you help me to check it.",
    "headlines": "Markets Rally as Inflation Cools; Tech Stocks Lead Gains in Early Trading\nCity Council Approves"
    " New Budget After Long Debate",
    "tool-json": '{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}',
    "shell": "total 12\ndrwxr-xr-x 2 root root 4096 Dec  7 10:00 src\n-rw-r--r-- 1 root root  220 Dec  7 10:00"
    " README.md\n-rw-r--r-- 1 root root 1024 Dec  7 10:00 setup.py",
    "chat": "Sure, I can or should be able to do that by the end of the day; let me see from what I have so far and"
    " get back to you.",
    "hedged": "Me too. I am not sure it is the same bug, but the stack trace looks the same as the one above, so"
    " maybe it is.",
    "german": "Ich habe das Paket gestern installiert, aber es gibt einen Fehler beim Start. Kannst du mir helfen?",
    "summary": "Done. I moved the retry loop into the client, added a test for the timeout case and updated the docs."
    " Let me know if you want the old behaviour back.",
}


@pytest.mark.parametrize("name", sorted(CLEAN))
def test_short_clean_replies_are_not_salad(name):
    text = CLEAN[name]
    assert implausible_pairs(text) > _limit()
    assert "degenerate_repetition" not in labels(message(text), "auto")


def test_a_salad_the_conversation_holds_is_a_quote():
    prompt = [{"role": "user", "content": f"My model printed this, why?\n{ONE_LINE}"}]
    assert "degenerate_repetition" not in labels(message(ONE_LINE, messages=prompt), "auto")


def test_a_field_of_more_than_64_words_is_left_to_the_other_statistics():
    # a design limit: the pair scores of long agent notes come near those of a short salad, so a field of more words
    # than the statistics' 64-token window is not scored (a long salad stays a known gap)
    prose = "The parser reads the header first and then the body, so the error must come from the body. " * 3
    assert len((prose + ONE_LINE).split()) > 64
    assert implausible_pairs(prose + ONE_LINE) == 0.0
    assert len((prose[:100] + ONE_LINE).split()) <= 64
    assert implausible_pairs(prose[:100] + ONE_LINE) < _limit()
