"""Near-duplicate repetition (eval/classify/neardup.py): long segments written again and again with a word changed
each time, which no exact period finds; and the indented-line fix of the run-together measure (spacing.py).

The texts are written here in the shape of the class (the held-out replies are not in the repository); the count
they cross is the calibrated one of eval/classify/degeneracy.json.
"""

from __future__ import annotations

import pytest

from eval.classify.calibrate import reference_prose
from eval.classify.neardup import near_duplicates, threshold
from eval.classify.repetition import worst_region
from eval.classify.spacing import run_together_share, strip_code
from tests.unit.classify.helpers import labels, message

PARAGRAPH = (
    "The error comes from the {} module, which reads the configuration file before the logger is set up, so the "
    "message is lost and the process exits without a trace."
)
WORDS = ("parser", "loader", "config", "runner", "cache", "client")
DRIFTING = [
    "\n\n".join(PARAGRAPH.format(w) for w in WORDS[:4]),
    " ".join(PARAGRAPH.format(w) for w in WORDS),
    "Let me check the tests first.\n\n" + "\n\n".join(PARAGRAPH.format(w) for w in ("io", "os", "re", "json", "csv")),
    # A paragraph of two sentences, the second one drifting.
    " ".join(
        f"I will open the file and read it again. The value of {w} is wrong here, so I check it once more and then"
        " I look at it again."
        for w in ("x", "y", "z", "w", "v")
    ),
]


@pytest.mark.parametrize("text", DRIFTING)
def test_a_paragraph_repeated_with_a_word_changed_is_a_loop(text: str) -> None:
    assert worst_region(text, False) is None  # no exact period: the class the region search misses
    assert near_duplicates(text) > threshold()
    assert "degenerate_repetition" in labels(message(text), "auto")
    assert "degenerate_repetition" in labels(message("", reasoning=text), "auto")


CLEAN = [
    "- The test for the parser passes on Linux and on macOS with Python 3.11.\n"
    "- The test for the loader fails on Windows because the path separator differs.\n"
    "- The test for the runner is skipped because it needs a network connection.",
    "I changed three files. The first one holds the parser, the second one the loader, the third one the tests.",
]


@pytest.mark.parametrize("text", CLEAN)
def test_similar_sentences_of_real_replies_are_not_a_loop(text: str) -> None:
    assert near_duplicates(text) <= threshold()
    assert "degenerate_repetition" not in labels(message(text), "auto")


def test_the_count_is_the_number_of_back_to_back_repeats() -> None:
    for n in range(1, 6):
        assert near_duplicates(" ".join(PARAGRAPH.format(w) for w in WORDS[:n])) == n
    apart = PARAGRAPH.format("parser") + " Then I ran the whole test suite again and it passed. "
    assert near_duplicates(apart + PARAGRAPH.format("loader")) == 1  # not back to back
    assert near_duplicates("The parser module is fine.") == 0  # no long segment


def test_the_reference_prose_stays_within_the_calibrated_count() -> None:
    assert threshold() >= 1.0
    assert sum(near_duplicates(piece) > threshold() for piece in reference_prose()) == 0


def test_an_indented_line_hides_only_itself_from_the_run_together_measure() -> None:
    glued = "Thereareseveralclassesavailablebydefaultincluding " * 4
    text = "Here is the call:\n    run(x)\n" + glued
    assert strip_code(text).startswith("Here is the call:\n \n")
    assert glued.strip() in strip_code(text)
    share = run_together_share(text)
    assert share is not None and share > 0.5
