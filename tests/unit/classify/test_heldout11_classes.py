"""Classes held-out part 11 showed (classifier 1.10.0): words glued a few at a time (a detokenizer or stream joiner
that drops some spaces), and Gemma's reserved `<unusedN>` placeholders written as text.

Every example is written for these tests (no third-party text)."""

from __future__ import annotations

from eval.classify.glued import glue_points, glued_words, lexicon
from eval.classify.glued import threshold as glued_threshold
from tests.unit.classify.helpers import labels, message

# --- words glued a few at a time -------------------------------------------------------------------------------


def test_the_lexicon_holds_common_english_words():
    words = lexicon()
    assert {"should", "this", "email", "install", "maybe"} <= words
    assert "thatshould" not in words


def test_a_reply_whose_words_are_glued_a_few_at_a_time_is_byte_piece():
    text = "The build passed today, thanksforwaiting. The fix isin mainand the tests thatfailed now pass."
    assert glued_words(text) > glued_threshold()
    assert "byte_piece" in labels(message(text), "auto")


def test_one_sentence_run_together_without_spaces_is_byte_piece():
    assert "byte_piece" in labels(message("Hello[Team],Iwantedtoletyouknowthebuildpassed."), "auto")


def test_glue_points_need_a_function_word_at_the_split():
    assert glue_points("thatshould") == 1
    assert glue_points("safeand") == 1
    assert glue_points("codebase") in (0, None)  # two content words: a compound, not a glue point
    assert glue_points("database") == 0  # a word of the lexicon


def test_english_closed_compounds_are_not_glue():
    for word in ("anytime", "somehow", "overall", "leftmost", "everyone", "colour"):
        assert not glue_points(word), word
    text = "Somehow the overall layout works anytime; everyone liked the colour scheme and the leftmost panel."
    assert "byte_piece" not in labels(message(text), "auto")


def test_a_single_glued_pair_in_a_field_is_within_what_clean_text_shows():
    # one glue point is what real prose shows now and then (a name, a compound the lexicon lacks)
    text = "The test thatfails on CI is the parser test; I will look at it after lunch and report back."
    assert glued_words(text) == 1
    assert "byte_piece" not in labels(message(text), "auto")


def test_code_names_and_other_languages_are_not_glue():
    code = "Call `isinstance(value, str)` and `thisshouldpass()`; the flag --passall and the path src/safeand/x.py."
    assert glued_words(code) == 0
    camel = "The helpers thatShould and passAll are names, so are THATSHOULD and Passall_x."
    assert glued_words(camel) == 0
    finnish = "Korean demokraattinen kansantasavalta ja tasavalta ovat naapureita, kansantalous kasvaa hitaasti."
    assert glued_words(finnish) == 0  # most runs are neither English words nor splits: another language


def test_glued_words_copied_from_the_prompt_are_clean():
    text = "Your account name thanksforwaiting is set; Iwantedtoletyouknow is the display name."
    prompt = "Set my account name to thanksforwaiting, display name Iwantedtoletyouknow."
    assert "byte_piece" in labels(message(text), "auto")
    assert "byte_piece" not in labels(message(text, prompt=prompt), "auto")


# --- Gemma's reserved placeholders ----------------------------------------------------------------------------


def test_gemma_unused_placeholders_as_text_are_leaked_special_tokens():
    text = "Kitchen:<unused17><unused17> a bright room with a long wooden table."
    assert "leaked_special_token" in labels(message(text), "auto")
    assert "leaked_special_token" in labels(message("The photo shows a dog.<end_of_image>"), "auto")


def test_gemma_placeholders_named_in_code_or_quotes_are_clean():
    text = "Gemma reserves `<unused0>` to `<unused98>`; strip them before display, as the tokenizer's skip list does."
    assert "leaked_special_token" not in labels(message(text), "auto")
    fenced = 'Placeholders look like this:\n\n```python\nRESERVED = ["<unused0>", "<unused1>"]\n```'
    assert "leaked_special_token" not in labels(message(fenced), "auto")
