"""Classes the held-out parts showed and classifier 1.13.0 missed (classifier 1.14.0): word salad of common words at
the end of a long reply (`tail_pairs`, eval/classify/tailsalad.py), a loop of one digit that ends a reply
(`digit_run`, eval/classify/digitrun.py) and a file name of the prompt written with a space inside its extension
(eval/classify/identifiers.py).

Every example is written for these tests (no third-party text)."""

from __future__ import annotations

from eval.classify.context import Context
from eval.classify.digitrun import digit_run, final_digit_run
from eval.classify.digitrun import threshold as digit_threshold
from eval.classify.messages import classify_message
from eval.classify.model import ToolSpec
from eval.classify.tailsalad import last_stretch, tail_pairs
from eval.classify.tailsalad import threshold as tail_threshold
from eval.classify.wordpairs import implausible_pairs
from tests.unit.classify.helpers import call, labels, message

ANSWER = (
    "I looked at the parser and at the failing tests. The failure comes from the empty input case, where the "
    "function returns None instead of an empty list, and the caller then iterates over it.\n\n"
    "I changed the early return to give an empty list and added a test for the empty string, which now passes. "
    "The other tests of the module pass as well, so the change does not break the cases that worked before.\n\n"
)
SALADS = (
    "and like to been and sa p I less millions the three is ( other your the and of will on been they which the by "
    "more it to",
    "so the of was it for been your and the that of in is to my no at will the very from there by and been had you",
    "when the new was of and in been had your the they at that for would it on the my by this the from and so not",
)


def test_salad_after_a_long_answer_is_degenerate():
    assert tail_threshold() < 0  # calibrated: none of the 32,442 dev fields and catalog pieces below it
    for salad in SALADS:
        text = ANSWER + salad
        assert implausible_pairs(text) == 0.0  # a long field: the short-field statistic does not read it
        assert tail_pairs(text) < tail_threshold(), salad
        assert "degenerate_repetition" in labels(message(text), "auto"), salad
        assert "degenerate_repetition" in labels(message("Done.", reasoning=text), "auto"), salad


def test_long_answers_ending_in_sentences_stay_clean():
    lists = ANSWER + "The files I changed:\n\n- parser.py: the early return\n- test_parser.py: the new test\n"
    long_sentence = ANSWER + (
        "Now let me run the whole test suite of the project once more, with the verbose flag and the coverage report "
        "turned on, to make sure that the change to the parser does not break any of the other modules that use it"
    )
    code = ANSWER + "```python\nfor item in items or []:\n    total += item.value if item else 0\n```\n"
    for text in (ANSWER, lists, long_sentence, code):
        assert tail_pairs(text) >= tail_threshold(), text[-80:]
        assert "degenerate_repetition" not in labels(message(text), "auto"), text[-80:]


def test_the_stretch_gate_lets_few_fields_through():
    assert last_stretch(ANSWER) is None  # the last sentence is short
    assert (last_stretch(ANSWER + SALADS[0]) or "").strip() == SALADS[0]
    assert last_stretch("word " * 30) is not None  # a field of no sentence end: its last characters
    assert last_stretch("x" * 5000) is None  # one token


def test_a_digit_loop_ending_a_reply_is_degenerate():
    assert digit_threshold() >= 8  # calibrated on real text that writes long numbers
    for text in (
        "The total number of combinations is 12" + "0" * 120,
        "Sure! Here is the result:\n\n12" + "0" * 150,
        "The answer is **7" + "7" * 80 + "**.",
    ):
        start, end = final_digit_run(text)
        assert end - start > digit_threshold(), text[:40]
        assert "degenerate_repetition" in labels(message(text), "auto"), text[:40]
    truncated = message("The value is 3" + "0" * 60, finish="length")
    assert "degenerate_repetition" in labels(truncated, "auto")


def test_long_numbers_in_real_replies_stay_clean():
    for text in (
        "One third as a float is 0.3333333333333333",
        "0.1 + 0.2 gives 0.30000000000000004 because of binary floating point.",
        "The pointer is null: the fault address is 0x0000000000000000",
        "A googol is 1 followed by 100 zeros: 1" + "0" * 100 + " is far more than the atoms in the universe.",
        "Python's int has no limit: `10 ** 40` is 1" + "0" * 40,
        "```python\nBIG = 1" + "0" * 60 + "\n```",
        "```\n" + "0" * 40,  # a fence left open
        "Set the mask to `0b" + "1" * 64 + "`",
        "The WAL segment to keep is 000000010000000000000010",
        "One billion is 1000000000",
        "x = 1" + "0" * 30,  # a line of code
    ):
        assert "degenerate_repetition" not in labels(message(text), "auto"), text[:60]


def test_digit_run_reads_integers_on_prose_lines():
    assert digit_run("It is 12" + "0" * 30 + " meters.") == 30
    assert digit_run("pi is 3.14159 and 1/3 is 0." + "3" * 40) == 0  # a fraction's digits are not read
    assert digit_run("x = 1" + "0" * 30) == 0  # a line of code
    assert digit_run("no long runs here: 1234 5678", limit=18) == 0  # the gate


def test_a_run_of_digits_after_a_line_of_code_is_its_data():
    for text in ("x = [0] * 8\n" + "0" * 70, "print('0' * 40)\n\n" + "0" * 40):
        assert final_digit_run(text) == (0, 0), text[:20]


def _labels_after(prompt: str, msg: dict[str, object], tools: list[ToolSpec] | None = None) -> list[str]:
    context = Context.build("auto", tools, tools_known=tools is not None)
    labels: list[str] = classify_message(dict(msg, prompt=prompt), context)["labels"]
    return labels


def test_a_space_inside_a_prompt_file_extension_is_identifier_corruption():
    read = [ToolSpec(name="read", properties=("path",), required=("path",))]
    for prompt, written in (
        ("Fix the signal in character_creation.tscn please.", "character_creation.ts cn"),
        ("Summarize analysis_notes.ipynb for me.", "I read analysis_notes.ip ynb and"),
        ("Load the level from level_two.tscn now.", "Opened level_two.ts cn, then the scene."),
    ):
        assert "identifier_corruption" in _labels_after(prompt, message(written)), written
    msg = message(calls=[call("read", {"path": "scenes/level_one.ts cn"})])
    assert "identifier_corruption" in _labels_after("Open scenes/level_one.tscn and fix it.", msg, read)


def test_another_file_then_a_word_stays_clean():
    for prompt, written in (
        ("Compare config.json with the defaults.", "The loader reads config.js on startup and then config.json."),
        ("Open notes.markdown and fix the links.", "I looked at notes.mark down the page; notes.markdown is fixed."),
        ("Fix main.tsx please.", "Fixed main.tsx; main.ts x was not touched."),  # the prompt quoted: known tokens
        ("Convert data.csv to data.json.", "Converted data.csv into data.json."),
    ):
        assert "identifier_corruption" not in _labels_after(prompt, message(written)), written
