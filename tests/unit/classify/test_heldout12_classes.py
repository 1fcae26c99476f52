"""Classes held-out part 12 showed (classifier 1.12.0): call markup that names an offered tool in attribute or element
form, words split by stray spaces, words spelled letter by letter, and mojibake of the single-byte code pages.

Every example is written for these tests (no third-party text)."""

from __future__ import annotations

from eval.classify import ToolSpec
from eval.classify.codepages import codepage_runs
from eval.classify.splitwords import spaced_gaps, spaced_letters, split_pieces, thresholds
from tests.unit.classify.helpers import bash, labels, message

WEATHER = [ToolSpec("get_weather", ("city",))]
SEARCH = [ToolSpec("search_docs", ("query",))]

# --- call markup naming an offered tool -------------------------------------------------------------------------


def test_attribute_style_call_markup_naming_an_offered_tool_is_leaked_tool_xml():
    for text in (
        '<function name="get_weather"><param name="city">Oslo</param></function>',
        "<tool name='get_weather'>\n<arg name=\"city\">Oslo</arg>\n</tool>",
        '<tool_call name="get_weather">{"city": "Oslo"}',
        '<acme:invoke name="get_weather">\n<acme:parameter name="city">Oslo</acme:parameter>\n</acme:invoke>',
        "I will check.\n<get_weather>\n  <city>Oslo</city>\n</get_weather>",
    ):
        assert "leaked_tool_xml" in labels(message(text), "auto", tools=WEATHER), text


def test_call_markup_needs_an_offered_tool_and_no_parsed_call():
    text = '<function name="get_weather"><param name="city">Oslo</param></function>'
    assert "leaked_tool_xml" not in labels(message(text), "auto", tools=SEARCH)  # not a tool of this request
    with_call = message(text, calls=[bash("ls")])
    assert "leaked_tool_xml" not in labels(with_call, "auto", tools=[*WEATHER, ToolSpec("bash", ("command",))])


def test_quoted_call_markup_and_plain_elements_stay_clean():
    for text in (
        'Write `<function name="get_weather">` to call it.',
        '```xml\n<function name="get_weather"><param name="city">Oslo</param></function>\n```',
        'The model printed <function name="get_weather"> instead of calling it.',
        "<get_weather>Oslo</get_weather> is how the old prompt wrote it",  # no parameter element inside
        '<input name="get_weather" type="text">',  # not a call tag
    ):
        assert "leaked_tool_xml" not in labels(message(text), "auto", tools=WEATHER), text
    html = [ToolSpec("table", ())]
    assert "leaked_tool_xml" not in labels(message("<table>\n<tr><td>1</td></tr></table>"), "auto", tools=html)


# --- words split by stray spaces --------------------------------------------------------------------------------

SPLIT = (
    "The  new  release  makes  the  parser  much  faster ,  and  the  config  loader  is  simpler  too .  "
    "It  now  supports  incre mental  builds  and  the  summar ization  of  logs :  both  were  long  requested ,  "
    "and  both  came  with  tests ."
)


def test_a_reply_whose_gaps_are_doubled_is_byte_piece():
    assert spaced_gaps(SPLIT) > thresholds()["spaced_gaps"]
    assert "byte_piece" in labels(message(SPLIT), "auto")


def test_pieces_that_join_into_a_word_are_found():
    assert {w for _, _, w in split_pieces(SPLIT)} >= {"summarization"}
    single = SPLIT.replace("  ", " ").replace(" ,", ",").replace(" .", ".").replace(" :", ":")
    assert spaced_gaps(single) < thresholds()["spaced_gaps"]


def test_ordinary_prose_with_two_spaces_after_sentences_is_clean():
    text = (
        "The release makes the parser faster.  The config loader is simpler too.  It supports incremental builds "
        "and the summarization of logs.  Both were long requested, and both came with tests.  Thanks for the review."
    )
    assert spaced_gaps(text) <= thresholds()["spaced_gaps"]
    assert split_pieces(text) == []
    assert "byte_piece" not in labels(message(text), "auto")


def test_two_words_that_are_both_words_are_not_split_pieces():
    assert split_pieces("We pass over all the items and take the one with most votes every time.") == []


# --- words spelled letter by letter -----------------------------------------------------------------------------


def test_a_word_spelled_letter_by_letter_is_byte_piece():
    text = '{\n    "name": "rook",\n    "s h i e l d": "wood",\n    "p o w e r": 3\n}'
    assert [w for _, _, w in spaced_letters(text)] == ["shield", "power"]
    assert "byte_piece" in labels(message(text), "auto")


def test_spaced_capitals_variables_and_acronyms_stay_clean():
    for text in (
        "Please S T O P the W A R N I N G banner from printing twice.",
        "Let a b c d e be positive integers with a < b.",
        "Pick one of the options p q r s t and explain why.",
        "The N A S A team and the U S A delegation met in x y z order.",
    ):
        assert spaced_letters(text) == [], text
        assert "byte_piece" not in labels(message(text), "auto"), text


# --- mojibake of single-byte code pages ---------------------------------------------------------------------------


def _mojibake(text: str, page: str) -> str:
    return text.encode("utf-8").decode(page)


def test_utf8_read_as_a_dos_code_page_is_byte_piece():
    text = "Bonjour! " + _mojibake("Ça va très bien, merci.", "cp850")
    assert codepage_runs(text)[0] in ("cp437", "cp850")
    assert "byte_piece" in labels(message(text), "auto")


def test_utf8_read_as_cyrillic_and_mac_code_pages_is_byte_piece():
    for page in ("cp1251", "koi8-r", "mac_roman"):
        text = "Answer: " + _mojibake("Доброе утро, друзья", page)
        assert codepage_runs(text)[0], page
        assert "byte_piece" in labels(message(text), "auto"), page


def test_box_drawing_trees_and_real_text_stay_clean():
    for text in (
        "project/\n├── src/\n│   ├── main.py\n│   └── util.py\n└── README.md",
        "┌──┬──┐\n│ab│cd│\n└──┴──┘",
        "Доброе утро, друзья! ВСЁ хорошо.",
        "Это тот ход, так и было, ужо потом.",  # cp866 puts these letters on UTF-8 lead and continuation bytes
        "Ça va très bien — «À bientôt», naïve café, Zażółć gęślą jaźń.",
        "Γειά σου κόσμε, καλημέρα.",
    ):
        assert codepage_runs(text) == ("", []), text
        assert "byte_piece" not in labels(message(text), "auto"), text


def test_one_pair_of_mojibake_characters_in_a_field_is_not_enough():
    text = "The console showed ┬┐ once, then ┬┐ again, then the menu."  # one decoded character, twice
    assert codepage_runs(text) == ("", [])


def test_mojibake_in_inline_code_is_named_not_emitted():
    text = "On Windows the console shows `┬┐C├│mo est├ís?` instead of the accents."
    assert "byte_piece" not in labels(message(text), "auto")
