"""Classes held-out part 10 showed (classifier 1.9.0): texts that discuss a tokenizer's markers or call markup and
show examples of them in fenced blocks, and a harmony call whose special tokens were rendered empty.

Every example is written for these tests (no third-party text)."""

from __future__ import annotations

from eval.classify import ToolSpec
from tests.unit.classify.helpers import labels, message

# --- markers named in inline code: the fenced examples are quotes --------------------------------------------

MARKER_PR = (
    "The streaming decoder printed the space marker `Ġ` (U+0120) instead of a space:\n\n"
    "```\nbefore: Good!ĠWhatĠshallĠweĠbuild?\nafter:  Good! What shall we build?\n```\n\n"
    "It now picks the byte-level decoder whenever the pre-tokenizer is `ByteLevel`."
)
SPM_NOTE = (
    "The vocabulary stores `▁Hello` with the word marker in front. Note that SentencePiece writes ▁ as a space "
    "before each word, so decoding must replace it."
)


def test_byte_level_markers_in_a_fence_of_a_text_that_names_them_are_quoted():
    assert "byte_piece" not in labels(message(MARKER_PR), "auto")


def test_a_sentencepiece_marker_named_as_a_word_in_a_text_that_names_it_is_quoted():
    assert "byte_piece" not in labels(message(SPM_NOTE), "auto")


def test_markers_are_still_found_where_the_text_does_not_name_them():
    fenced = "Here is the greeting:\n\n```\nGood!ĠWhatĠshallĠweĠbuild?\n```"
    assert "byte_piece" in labels(message(fenced), "auto")
    assert "byte_piece" in labels(message("Good!ĠWhatĠshallĠweĠbuild?"), "auto")
    assert "byte_piece" in labels(message(" ▁▁ four words here\n ▁ and more"), "auto")


def test_inline_code_that_does_not_name_a_marker_excuses_nothing():
    text = "Run `make test` first.\n\n```\nGood!ĠWhatĠshallĠweĠbuild?\n```"
    assert "byte_piece" in labels(message(text), "auto")


def test_a_leaked_fence_with_marker_newlines_is_not_inline_code():
    # the backticks of a fence written with newline markers are part of the leak, not a code span naming them
    assert "byte_piece" in labels(message('```jsonĊ{ĊĠĠ"city":Ġ"Oslo"Ċ}Ċ```'), "auto")


def test_a_marker_replacing_a_space_stays_a_leak_in_a_text_that_names_it():
    text = "The marker `▁` stands for a space.\nYour▁order▁has▁shipped▁today."
    assert "byte_piece" in labels(message(text), "auto")


# --- call markup named outside a fence: the fenced template is an example ----------------------------------

TEMPLATE_REPORT = (
    "The model sometimes adds a stray `</function>` after its call. The template asks for:\n\n"
    "```\n<tool_call>\n<function=name_of_tool>\n<parameter=first_arg>\nvalue\n</parameter>\n</function>\n"
    "</tool_call>\n```\n\nand the parser then fails."
)
TEMPLATE_ADVICE = (
    "The model often leaves out the opening <tool_call> tag, so I changed the instructions to:\n\n"
    "```\nWrap every call like this:\n<tool_call>\n<function=name_of_tool>\n<parameter=first_arg>\nvalue\n"
    "</parameter>\n</function>\n</tool_call>\n```"
)


def test_call_markup_in_a_fence_of_a_text_that_names_the_markup_is_an_example():
    for text in (TEMPLATE_REPORT, TEMPLATE_ADVICE):
        assert "leaked_tool_xml" not in labels(message(text), "auto")
        assert "leaked_tool_xml" not in labels(message(text), "qwen3_coder")


def test_a_call_written_as_a_markdown_block_is_still_a_leak():
    text = "Let me look at the file.\n\n```\n<tool_call>\n<function=read_file>\n<parameter=path>\nsrc/app.py\n"
    text += "</parameter>\n</function>\n</tool_call>\n```"
    assert "leaked_tool_xml" in labels(message(text), "auto")


def test_unrelated_inline_code_does_not_excuse_a_fenced_call():
    text = "I will run `pytest -q` next.\n\n```\n<function=bash>\n<parameter=command>\npytest -q\n</parameter>\n"
    text += "</function>\n```"
    assert "leaked_tool_xml" in labels(message(text), "auto")


# --- harmony with its tokens rendered empty, arguments following the recipient ------------------------------

WEATHER = [ToolSpec("lookup_forecast", ("town",), ("town",))]


def test_a_harmony_recipient_followed_by_json_arguments_is_a_leaked_call():
    for content in (
        'commentary to=functions.lookup_forecast json{"town":"Oslo"}',
        'commentary to=functions.lookup_forecast <|constrain|>json{"town": "Oslo"}',
        "commentary to=functions.lookup_forecast json{}",
    ):
        assert "leaked_tool_xml" in labels(message(content), "auto", tools=WEATHER)
        assert "leaked_tool_xml" in labels(message(content), "auto")


def test_a_harmony_recipient_named_in_a_sentence_stays_clean():
    for content in (
        "The parser looks for to=functions.lookup_forecast in the header and routes the call.",
        "A header such as commentary to=functions.lookup_forecast tells the server who receives it.",
    ):
        assert "leaked_tool_xml" not in labels(message(content), "auto")
