"""Issue 30: what the classifier missed in the wild. Statistical degeneracy (loops in short fragments and in
reasoning, function-word salad), reasoning cut by max_tokens, byte-level space/newline markers, closing tags
alone, identifier slips of the request's names; and real text with the same characters staying clean.

The messages are written here in the shapes the issue describes (the held-out replies themselves are not in the
repository); the thresholds they cross are the calibrated ones of eval/classify/degeneracy.json.
"""

from __future__ import annotations

import pytest

from eval.classify.calibrate import quantile_threshold, reference_prose
from eval.classify.context import Context
from eval.classify.degeneracy import STATISTICS, crossed, degenerate, prose, statistics, thresholds
from eval.classify.messages import classify_message
from eval.classify.model import ToolSpec
from tests.unit.classify.helpers import message


def wild(msg: dict, tools: list[ToolSpec] | None = None, prompt: str | None = None) -> list[str]:
    if prompt is not None:
        msg = dict(msg, prompt=prompt)
    return classify_message(msg, Context.build("auto", tools, tools_known=tools is not None))["labels"]


LOOPS = [
    message("The capital of France is is is is is is is is"),  # a one-token loop, short fragment
    message("Sure. Here is the the the the answer."),  # four repetitions only
    message("yes no yes no yes no yes no yes no"),
    message("the answer is 42, the answer is 42, the answer is 42, the answer is 42"),
    # Function-word salad: no unit repeats, every word is one a language uses most.
    message("the of and to in a is that for it as with was on be at by this had not are but from or have an"),
    message("and the of the to a in the of and is the for to of a the and in that"),
    # Loops in reasoning, exact and with variations.
    message("", reasoning="Okay. " + "Wait, maybe I should check the file again. Let me look at the function. " * 5),
    message("", reasoning="".join(f"Wait, x is {i}, so the check fails. Let me recompute the sum. " for i in range(6))),
    message("这是一个测试。" + "我们需要检查这个问题。" * 5),
]


@pytest.mark.parametrize("msg", LOOPS)
def test_loops_and_salad_are_degenerate(msg):
    assert "degenerate_repetition" in wild(msg)


CLEAN = [
    message("Sure! The capital of France is Paris. It has been the capital since the 10th century."),
    message("ha ha ha ha, that is a good one"),
    message("哈哈哈哈哈哈哈哈，太好笑了。"),
    message("Files:\n- src/a.py\n- src/b.py\n- src/c.py\n- src/d.py\n- src/e.py"),
    message("```\nPASSED\nPASSED\nPASSED\nPASSED\nPASSED\n```\nAll five tests pass."),
    message("", reasoning="The user wants a summary. I will list the three changes and then explain the fix."),
    message(
        "I looked at the parser. It reads the header, then each record, and it stops at the first empty line. "
        "The bug is that a record may hold an empty field, which the loop takes for the end. I changed the "
        "check to look for two newlines in a row, and added a test with an empty field in the middle."
    ),
]


@pytest.mark.parametrize("msg", CLEAN)
def test_ordinary_replies_are_not_degenerate(msg):
    assert "degenerate_repetition" not in wild(msg)


def test_the_thresholds_are_the_calibrated_ones_and_hold_on_the_reference_prose():
    limits = thresholds()
    assert set(limits) == set(STATISTICS)
    pieces = reference_prose()
    flagged = sum(bool(degenerate(statistics(p))) for p in pieces)
    assert len(pieces) > 400 and flagged / len(pieces) <= 0.01


def test_a_quantile_threshold_leaves_at_most_alpha_beyond_it():
    values = [float(v) for v in range(1000)]
    assert quantile_threshold(values, low_is_degenerate=False, alpha=0.002) == 997.0  # 998, 999 beyond
    assert quantile_threshold(values, low_is_degenerate=True, alpha=0.002) == 2.0  # 0, 1 beyond


def test_statistics_read_the_prose_not_the_code():
    code = "```python\nx = 0\nx = 0\nx = 0\nx = 0\n```\n    y = 1\n| a | b |\n"
    text = f"Here is the fix.\n{code}It works now, as the tests show."
    assert prose(text) == "Here is the fix.\nIt works now, as the tests show."
    assert crossed(statistics("x = 0\n" * 40)) == []


def test_reasoning_cut_by_max_tokens_is_reasoning_only():
    msg = message("", reasoning="Let me think about the regex anchors and the", finish="length")
    assert wild(msg) == ["reasoning_only", "truncated"]


BPE_MARKERS = [
    "TheĠcapitalĠofĠFranceĠisĠParis.",
    "Here is the plan:ĊĊ1. Read the file.",
    "Done.ĊĊ",
    "The Ġcapital Ġof ĠFrance",
]


@pytest.mark.parametrize("text", BPE_MARKERS)
def test_byte_level_space_and_newline_markers_are_byte_pieces(text):
    assert "byte_piece" in wild(message(text))


REAL_LETTERS = [
    "Il-Ġermanja hija pajjiż fl-Ewropa. Ġimgħa sabiħa lil kulħadd.",  # Maltese: Ġ, Ċ are letters
    "L-Ċentru tal-belt u l-Ġnien",
    "Masaĉuseco kaj Ĉinio estas lokoj; ŝi manĝas ĉiutage.",  # Esperanto: ĉ is a letter, not a tab marker
    "Zażółć gęślą jaźń, Łódź",
    "Çıkış yapmak için Çıkar düğmesine basın.",  # Turkish: `Çı` maps to bytes of the rare `Ǐ`
]


@pytest.mark.parametrize("text", REAL_LETTERS)
def test_real_letters_of_the_byte_alphabet_are_clean(text):
    assert wild(message(text)) == []


CLOSING_TAGS = [
    "</tool_call>",
    "</function>\n</tool_call>",
    "Let me check the file.</tool_call>",
    "</invoke>\n</minimax:tool_call>",
    "</arg_value>",
    "<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
    "<|tool_call_end|><|tool_calls_section_end|>",
    "</tool_calls>",
    "<tool_call>\n<function=bash>\n...\n</function>\n</tool_call>",  # an elided middle
]


@pytest.mark.parametrize("text", CLOSING_TAGS)
def test_closing_tags_alone_are_leaked_markup(text):
    assert "leaked_tool_xml" in wild(message(text))


@pytest.mark.parametrize(
    "text", ["The parser emits </tool_call> at the end.", "Close it with </div>.", "Use `</function>` there."]
)
def test_closing_tags_named_in_prose_are_clean(text):
    assert wild(message(text)) == []


WEATHER = ToolSpec("get_current_weather", required=("location",), properties=("location", "unit_system"))


@pytest.mark.parametrize(
    ("prompt", "reply"),
    [
        ("Install react-native-reanimated please.", "Run npm install react-native-reanimeted now."),
        ("The function getUserById fails.", "Look at getUserByld in the code."),
        ("What is the weather?", "I will call get_curent_weather for you."),
    ],
)
def test_near_misses_of_the_requests_names_are_identifier_corruption(prompt, reply):
    assert "identifier_corruption" in wild(message(reply), tools=[WEATHER], prompt=prompt)


def test_the_requests_names_written_right_are_clean():
    reply = message("I will call get_current_weather; getUserById and IdleTimer stay as they are.")
    assert wild(reply, tools=[WEATHER], prompt="getUserById fails; see IdleTimer.") == []


# Classifier 1.6.0, written for these tests (not taken from a held-out set).
DOUBLED = [
    message("We need need to to check check the the config config file file before before we we deploy deploy it."),
    message(
        "", reasoning="So the the value value is is wrong wrong because because the the loop loop never ends ends."
    ),
]
NOT_DOUBLED = [
    message("I think that that is the right fix; the typo in the README is fixed too, and the tests pass."),
    message("No no, that is not what I meant. The test passes now, and the build is green on all platforms."),
    message("Yes, yes. The test passes now, and the build is green on all three platforms we support."),
]


@pytest.mark.parametrize("msg", DOUBLED)
def test_every_word_doubled_is_degenerate(msg):
    assert "degenerate_repetition" in wild(msg)


@pytest.mark.parametrize("msg", NOT_DOUBLED)
def test_a_doubled_word_or_two_in_prose_is_clean(msg):
    assert "degenerate_repetition" not in wild(msg)


ID = "7f3a9c0e5b2d4e81a6c93f0d2b7e1a45"


@pytest.mark.parametrize(
    "written",
    [
        "7f3a9c0e5b2d4e81a6c3f0d2b7e1a45",  # one digit dropped inside: id_slip's
        "7f3a9c0e5bd2d4e81a6c93f0db7e1a45",  # two inserted
        "7f8a9c0e5b2d4e81a6c9af0d2b7e1a45",  # two changed
    ],
)
def test_a_long_id_copied_with_a_few_slips_is_identifier_corruption(written):
    labels = wild(message(f"Deleting record {written} now."), prompt=f"The record id is {ID}.")
    assert "identifier_corruption" in labels


def test_another_id_or_a_short_hex_string_is_not_a_near_miss():
    other = "0b1e4d7a9c2f5e83b6d1a04c7e9f2b13"  # a different random ID: ~30 edits away
    assert "identifier_corruption" not in wild(message(f"Record {other} created."), prompt=f"id {ID}")
    assert "identifier_corruption" not in wild(message("Use commit 3fa9c2e1d."), prompt="commit 3fa9c2e1b0")


def test_a_sentencepiece_marker_in_a_string_of_fenced_code_is_clean_and_a_fenced_leak_is_not():
    named = '```python\npieces = sp.encode("one▁two three")\n```'
    assert "byte_piece" not in wild(message(named))
    leaked = '```\ndef▁main():\n▁▁▁▁print("hi")\n```'
    assert "byte_piece" in wild(message(leaked))
