"""Classes held-out part 10 showed (classifier 1.9.0): texts that discuss a tokenizer's markers or call markup and
show examples of them in fenced blocks, and a harmony call whose special tokens were rendered empty.

Every example is written for these tests (no third-party text)."""

from __future__ import annotations

import pytest

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


# --- content_run: words strung together without any grammar --------------------------------------------------

CHAIN = (
    "walk stroll wander roam drift float glide slide slip trip stumble fall drop sink dive plunge soak drench "
    "flow spill splash ripple wave"
)


def test_a_long_chain_of_associated_words_is_salad():
    assert "degenerate_repetition" in labels(message(CHAIN), "auto")
    assert "degenerate_repetition" in labels(message("Here is the plan for the release.\n\n" + CHAIN + "…"), "auto")
    assert "degenerate_repetition" in labels(message("", reasoning=CHAIN), "auto")


@pytest.mark.parametrize(
    "content",
    [
        # long lowercase sentences hold function words every few words
        "i think the simplest fix is to read the config once at startup and pass it down to every worker that "
        "needs it instead of reading it again in each request handler",
        # German and Spanish prose: their function words are in the list
        "wir haben die neue version heute installiert und sie läuft ohne probleme auf allen servern im rechenzentrum",
        "el servidor responde con un error cuando la petición no tiene cabecera de autorización y eso es correcto",
        # keywords with commas, a chain in inline code, code in a fence, an indented line, a table row
        "tags: apple, banana, cherry, grape, lemon, mango, orange, peach, pear, plum, berry, melon, kiwi, lime",
        "Run `make build test lint format check release upload publish deploy verify notify tag push` once.",
        "```\nwalk stroll wander roam drift float glide slide slip trip stumble fall drop sink dive plunge\n```",
        "Example:\n\n    walk stroll wander roam drift float glide slide slip trip stumble fall drop sink dive plunge",
        "| a | walk stroll wander roam drift float glide slide slip trip stumble fall drop sink dive plunge |",
    ],
)
def test_prose_code_and_lists_are_not_word_chains(content):
    assert "degenerate_repetition" not in labels(message(content), "auto")


def test_content_run_is_the_longest_run_of_plain_non_function_words():
    from eval.classify.salad import content_run, thresholds

    assert thresholds()["content_run"] >= 8  # calibrated (degeneracy.json), not chosen
    assert content_run(CHAIN) == len(CHAIN.split())
    assert content_run(CHAIN, 15) == len(CHAIN.split())  # the classifier reads only stretches above the threshold
    assert content_run("the walk stroll wander roam drift float glide slide of the", 15) == 0
    assert content_run("the walk stroll wander roam drift float glide slide of the") == 8
    assert content_run("walk stroll wander roam drift float glide") == 0  # shorter than a stretch: not read
    assert content_run("walk stroll wander, roam drift float glide slide slip") == 0  # a comma ends a stretch


# --- CJK mojibake whose C1 bytes were dropped -----------------------------------------------------------------


def _dropped_c1(text: str) -> str:
    """`text`'s UTF-8 read as Latin-1, the C1 controls (0x80-0x9F) dropped, for the characters marked with `*`."""
    out = []
    for i, ch in enumerate(text):
        if ch == "*":
            continue
        if text[i + 1 : i + 2] == "*":
            out.append("".join(chr(b) for b in ch.encode("utf-8") if not 0x80 <= b <= 0x9F))
        else:
            out.append(ch)
    return "".join(out)


def test_cjk_characters_reduced_to_their_lead_bytes_are_mojibake():
    texts = (
        "今天我们去*公园，明天去*学校。",
        "はい、私*の名前はアイです。どう*ぞよろしく。",
        "오늘은안*녕하고내일도안*녕",
    )
    for text in texts:
        broken = _dropped_c1(text)
        assert broken != text.replace("*", "")
        assert "byte_piece" in labels(message(broken), "auto"), broken


@pytest.mark.parametrize(
    "content",
    [
        "ポケモンカードとPokémonの話です。カフェ・café で会いましょう。",  # accented Latin inside Latin words
        "这个字读作是shì，那个读作bà。",  # pinyin glued to a Latin letter
        "今天去*公园。",  # one remnant alone
        "我们说：à la carte 的意思是单点。",  # a French phrase set off by spaces
    ],
)
def test_accented_latin_beside_cjk_is_not_mojibake(content):
    assert "byte_piece" not in labels(message(_dropped_c1(content)), "auto")


# --- midsentence_marks: a mark sprinkled after word upon word ---------------------------------------------------


def test_marks_after_word_upon_word_are_salad():
    for content in ("Sure!! I! will! check! the! logs! now!", "Okay? let? me? look? at? the? file?"):
        assert "degenerate_repetition" in labels(message(content), "auto"), content
    assert "degenerate_repetition" in labels(message("", reasoning="Hmm, the! user! wants! a! list!"), "auto")


def test_midsentence_marks_counts_one_line_of_prose():
    from eval.classify.salad import midsentence_marks

    assert midsentence_marks("Sure!! I! will! check! the! logs! now!") == 4  # `I!` is one letter, `Sure!! I` a capital
    assert midsentence_marks("Is it ready? yes, it is.\nIs it done? yes, it is.") == 1
    assert midsentence_marks("```\nwill! check! the! logs! now\n```") == 0  # code is not prose
    assert midsentence_marks("Sure! Let me check.", limit=1.0) == 0


@pytest.mark.parametrize(
    "content",
    [
        "Wow! that works now. Great! Let me also run the tests.",
        "¡Hola! ¿Cómo estás? Bien, gracias. ¿Y tú?",
        "Is it ready? yes, the build passed.\nAnything else? no, that is all.",  # one a line
        "Achtung! 설정이 바뀌었습니다. 주의! make sure to restart",  # a mark before another alphabet's word
        "```sh\necho hi! there && echo why? not\n```\nDone! The script ran.",
        "if (!ready) { return x != y ? a : b; }",
    ],
)
def test_ordinary_exclamations_and_questions_are_not_salad(content):
    assert "degenerate_repetition" not in labels(message(content), "auto")


def test_content_run_reads_the_end_and_knows_fences_opened_before_it():
    from eval.classify.salad import CONTENT_READS, content_run

    filler = "Some setup text for the example follows here.\n" * (CONTENT_READS // 40 + 2)
    assert content_run(filler + CHAIN) == len(CHAIN.split())
    assert content_run(CHAIN + "\n" + filler) == 0  # a chain no longer at the end is not read
    assert content_run("```\n" + filler + CHAIN + "\n```") == 0  # the fence opened before the window


def test_the_run_bound_is_never_below_the_run():
    from eval.classify.salad import _run_bound, content_run

    for text in (CHAIN, "the " + CHAIN + " of the", "Tags. " + CHAIN, CHAIN.replace(" flow ", " flow, ")):
        assert _run_bound(text, 8) >= content_run(text, 8)
