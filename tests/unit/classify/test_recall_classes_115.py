"""Classes the held-out parts showed and classifier 1.14.0 missed (classifier 1.15.0): a loop of one letter that ends a
reply (`letter_run`, eval/classify/letterrun.py), and a digit loop that is the whole reply from its first character
(`final_digit_run`, eval/classify/digitrun.py, read an empty string before the number as a fraction's point).

Every example is written for these tests (no third-party text)."""

from __future__ import annotations

from eval.classify.digitrun import final_digit_run
from eval.classify.digitrun import threshold as digit_threshold
from eval.classify.letterrun import final_letter_run, letter_run
from eval.classify.letterrun import threshold as letter_threshold
from tests.unit.classify.helpers import labels, message


def test_a_letter_loop_ending_a_reply_is_degenerate():
    assert 2 <= letter_threshold() < 64  # calibrated on real text; shorter than the one-letter loop rule's 64
    for text in (
        "sono pronto arrivare" + "\u064a" * 40,  # a letter of another script glued to the last word
        "The answer is " + "a" * 30,  # a run after a blank
        "Here is the list:\n\n" + "\u0436" * 25 + "\n",  # blanks after the run
        "\u4f60\u597d\uff0c" + "k" * 20,  # Latin after Han
        "q" * 40,  # nothing else
    ):
        start, end = final_letter_run(text)
        assert end - start > letter_threshold(), text[:30]
        assert text[start:end] == text.rstrip()[-(end - start) :]
        assert "degenerate_repetition" in labels(message(text), "auto"), text[:30]
    truncated = message("Let me think about it " + "m" * 40, finish="length")
    assert "degenerate_repetition" in labels(truncated, "auto")


def test_lengthened_words_and_other_endings_stay_clean():
    for text in (
        "Noooooooooooooooooooooooooo",  # a word lengthened on purpose
        "The cat fell asleep on the keyboard. Zzzzzzzzzzzzzzzzzzzzzzzzz",
        "Hmmmmmmmmmmmmmmmmmmmmmmm, let me check that again.",
        "That is sooooooooooooooooooooo good",
        "\u0646\u0639\u0645\u0645\u0645\u0645\u0645\u0645\u0645\u0645\u0645\u0645\u0645\u0645\u0645\u0645\u0645\u0645",
        "Use `'a' * 30` to get " + "a" * 10,  # a short run
        "The sequence ends in aa and bb.",
        "\u597d\u7684\uff01" + "\u54c8" * 20,  # laughter after a mark: Chinese,
        "\u305d\u308c\u306f\u9762\u767d\u3044" + "w" * 20,  # Japanese,
        "\ub300\ubc15!" + "\u314b" * 20,  # Korean
    ):
        assert letter_run(text) <= letter_threshold(), text[:30]
        assert "degenerate_repetition" not in labels(message(text), "auto"), text[:30]


def test_the_letter_run_gate_reads_the_last_two_characters():
    assert final_letter_run("") == (0, 0)
    assert final_letter_run("a") == (0, 0)
    assert final_letter_run("ab") == (0, 0)
    assert final_letter_run("x" * 5000) == (5000 - 1024, 5000)  # READS characters of it, beyond any threshold
    assert letter_run("word " + "b" * 3 + "   \n") == 3


def test_a_digit_loop_that_is_the_whole_reply_is_degenerate():
    for text in ("12" + "0" * 100, "7" * 30 + ".", "3" + "3" * 40 + "\n"):
        start, end = final_digit_run(text)
        assert end - start > digit_threshold(), text[:20]
        assert "degenerate_repetition" in labels(message(text), "auto"), text[:20]
    for text in ("1000000000", "0." + "3" * 40, "v1" + "0" * 40, "_" + "0" * 40, "2024"):
        assert "degenerate_repetition" not in labels(message(text), "auto"), text[:20]
