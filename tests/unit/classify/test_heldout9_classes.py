"""Classes held-out part 9 showed (classifier 1.8.0): a reply of closing call tags alone whose name lost its head,
call tokens with a doubled bar, and text that discusses byte tokens or U+FFFD while quoting them.

Every example is written for these tests (no third-party text)."""

from __future__ import annotations

import pytest

from tests.unit.classify.helpers import labels, message

DEBRIS = ["\n\n</_call>", "</call>\n", "</ool_call>", " </_calls>\n</_invoke> ", "</parameter_>"]


@pytest.mark.parametrize("content", DEBRIS)
def test_a_reply_of_broken_closing_call_tags_alone_is_a_leak(content):
    for fmt in ("auto", "qwen3_coder", "hermes"):
        assert "leaked_tool_xml" in labels(message(content), fmt)


@pytest.mark.parametrize(
    "content",
    [
        "</div>",  # not a call tag
        "</p>\n</body>",
        "The parser drops </_call> when it sees it.",  # prose around it
        "Done. I closed the <b>bold</b> text.",
        "</all>",  # too short a piece to be a call tag's tail
    ],
)
def test_closing_tags_that_are_not_call_debris_stay_clean(content):
    assert "leaked_tool_xml" not in labels(message(content), "auto")


def test_call_tokens_with_a_doubled_bar_are_a_leak():
    content = (
        'I will list the folder first.\n\n<｜｜DSML｜｜tool_calls>\n<｜｜DSML｜｜invoke name="list_dir">\n'
        "</｜｜DSML｜｜invoke>\n</｜｜DSML｜｜tool_calls>"
    )
    assert "leaked_tool_xml" in labels(message(content), "auto")
    assert "leaked_tool_xml" in labels(message("Checking.\n<||tool▁calls▁begin||>"), "auto")


FENCED_BYTES = (
    "Our decoder printed byte pieces such as `<0xC3>` instead of joining them:\n\n"
    "```\ncaf<0xC3><0xA9> au lait\n```\n\nThe pair `<0xC3><0xA9>` is the UTF-8 of `é`."
)


def test_byte_tokens_in_a_fence_of_a_text_that_names_them_in_inline_code_are_quoted():
    assert "byte_piece" not in labels(message(FENCED_BYTES), "auto")


def test_byte_tokens_in_a_fence_are_still_found_when_the_text_does_not_name_them():
    text = "Here is the menu:\n\n```\ncaf<0xC3><0xA9> au lait\n```"
    assert "byte_piece" in labels(message(text), "auto")
    assert "byte_piece" in labels(message("caf<0xC3><0xA9> au lait, s'il vous pla<0xC3><0xAE>t"), "auto")


def test_fffd_in_short_quotes_of_a_text_that_names_it_is_quoted():
    text = (
        "Decoding the second token alone yields U+FFFD for the bytes it lacks, so the stream showed "
        "'\ufffd\u00e9t\u00e9' instead of \"\u00e9t\u00e9\"."
    )
    assert "replacement_char" not in labels(message(text), "auto")


def test_fffd_is_still_found_unquoted_or_when_the_text_does_not_name_it():
    named_but_bare = "The replacement character shows up: caf\ufffd au lait is what we got."
    assert "replacement_char" in labels(message(named_but_bare), "auto")
    quoted_not_named = "The menu says 'caf\ufffd' and nothing else."
    assert "replacement_char" in labels(message(quoted_not_named), "auto")
