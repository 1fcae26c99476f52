"""Classifier 1.5: identifier slips that are not one substitution (a file extension blended into no file type, a
space inside a prompt's name, a tool name with a word slipped or its namespace dropped) and word salad (runs of
letters that mix two alphabets; prose without function words). The messages are written here in the shapes of the
held-out cases (the third-party replies themselves are not in the repository); salad's thresholds are the
calibrated ones of eval/classify/degeneracy.json.
"""

from __future__ import annotations

import pytest

from eval.classify.context import Context
from eval.classify.messages import classify_message
from eval.classify.model import ToolSpec
from eval.classify.paths import KNOWN_EXTENSIONS, extension_slip
from eval.classify.salad import function_share, mixed_script_words, thresholds
from eval.classify.toolcalls import near_tool
from tests.unit.classify.helpers import call, message


def labels(msg: dict, tools: list[ToolSpec] | None = None, prompt: str | None = None) -> list[str]:
    if prompt is not None:
        msg = dict(msg, prompt=prompt)
    return classify_message(msg, Context.build("auto", tools, tools_known=tools is not None))["labels"]


def tool(name: str, *props: str) -> ToolSpec:
    return ToolSpec(name=name, properties=props, required=props)


READ = [tool("read", "path"), tool("write", "path", "content")]


@pytest.mark.parametrize(
    ("prompt", "path"),
    [
        ("Summarize report.docx for me.", "report.docodex"),
        ("Update the title slide in deck.pptx.", "deck.pptcodex"),
        ("Open scenes/level_one.tscn and fix the signal.", "scenes/level_one.tcsn"),
    ],
)
def test_an_extension_blended_into_no_file_type_is_identifier_corruption(prompt: str, path: str) -> None:
    msg = message(calls=[call("read", {"path": path})])
    assert "identifier_corruption" in labels(msg, READ, prompt)


@pytest.mark.parametrize(
    ("prompt", "path"),
    [
        ("Convert report.docx to PDF.", "report.pdf"),
        ("Add a prototype of parse_args in main.c to a header.", "main.h"),
        ("Port notes.md to reStructuredText.", "notes.rst"),
        ("Compile utils.py.", "utils.pyc"),
    ],
)
def test_a_new_file_type_beside_a_given_file_is_clean(prompt: str, path: str) -> None:
    msg = message(calls=[call("write", {"path": path, "content": "x"})])
    assert labels(msg, READ, prompt) == []


def test_extension_slips_need_an_unknown_type() -> None:
    assert extension_slip(b"xlsx", b"xlscodex")
    assert not extension_slip(b"docx", b"doc")  # a known type: a deliberate choice
    assert not extension_slip(b"zzq", b"zzqq")  # the original is no known type: nothing to compare with
    assert {"docx", "py", "json", "tscn"} <= KNOWN_EXTENSIONS


def test_a_space_inside_a_prompt_path_is_identifier_corruption() -> None:
    msg = message(calls=[call("read", {"path": "scenes/character_creation. tscn"})])
    prompt = "Open scenes/character_creation.tscn and fix the signal connection."
    assert "identifier_corruption" in labels(msg, READ, prompt)


def test_a_list_bullet_or_a_sentence_end_before_a_name_is_clean() -> None:
    prompt = "Set my_str_value and check scenes/character_creation.tscn."
    msg = message("Done:\n- my_str_value: set.\nI edited scenes/character_creation.tscn. Then I ran it.")
    assert labels(msg, READ, prompt) == []


@pytest.mark.parametrize(
    ("name", "offered"),
    [
        ("semanticSearter", ("keywordSearch", "readDoc", "semanticSearch")),
        ("keywordSearve", ("keywordSearch", "readDoc", "semanticSearch")),
        ("search_product_list", ("tool--product--search_product_list",)),
    ],
)
def test_a_word_slipped_or_a_namespace_dropped_is_a_corrupted_tool_name(name: str, offered: tuple[str, ...]) -> None:
    assert near_tool(name, offered) is not None
    msg = message(calls=[call(name, {})])
    assert "malformed_tool_call" in labels(msg, [tool(t) for t in offered])


@pytest.mark.parametrize(
    ("name", "offered"),
    [
        ("central_list_sites", ("central_get_sites",)),  # a word swapped: an invented tool (unknown_tool)
        ("search_docs", ("search_code",)),
        ("execute_command", ("execute_code",)),
        ("write_file", ("read_file",)),
    ],
)
def test_an_invented_tool_name_is_not_a_slip(name: str, offered: tuple[str, ...]) -> None:
    assert near_tool(name, offered) is None


SALAD = [
    # Pieces of a multilingual vocabulary glued at random.
    "among\u0441\u0438\u043b\u0430\u043d\u043d\u044f Stat dois Product Kenneth choose lang\u043d\u043e\u0432 "
    "roy\u0440\u043e\u043b\u044c Das wie\u0441\u0442\u043e\u0433\u043e fille passing\u0441\u043a\u0430\u044f "
    "ibnfix\u0456\u043d\u0430 curr",
]
# Real words, no sentence: what `function_share` would find; it is measured but off (eval/classify/salad.py says why),
# so this stays unlabelled today and the statistic still tells it from prose.
REAL_WORD_SALAD = (
    "embarked Sol existed trainer Tunisia replacing Wash Bac knowing franchise Premier sun lacked Tight circulating\n"
    "survived polishing policy redund Blocks visibly gorgeous freeway scan quieter colonization Wat venues Model\n"
    "monitor hypertension divine inexpensive commute Forum Legs Norm Table stakes random restn getting excuse Bold"
)


@pytest.mark.parametrize("text", SALAD)
def test_word_salad_is_degenerate(text: str) -> None:
    assert labels(message(text)) == ["degenerate_repetition"]


CLEAN = [
    "The server logs which of the two it was, and the client retries once with a larger budget. That is all we "
    "changed; the rest of the pipeline is as it was before the release.",
    # Chinese, Korean and Hindi write Latin names beside their own script; translations put separators between.
    "\u4fee\u590d\uff1a\u5c06reasoning\u4e4b\u540e\u7684content\u964d\u7ea7\u5230thought\u901a\u9053\u3002",
    "API\ub97c \ud638\ucd9c\ud558\uace0 JSON\uc744 \ud30c\uc2f1\ud569\ub2c8\ub2e4.",
    "Use --output-file=\u0424\u0410\u0419\u041b and COPY-\u10d8\u10e1 as shown; rc-\u0444\u0430\u0439\u043b is read.",
    # A list of names and a log are not prose: the function-word share does not apply.
    "Dependencies:\nnumpy pandas scipy matplotlib seaborn requests httpx pydantic typer rich pyyaml",
    "tests/test_a.py::test_one PASSED\ntests/test_a.py::test_two PASSED\ntests/test_a.py::test_three PASSED",
    # A German paragraph.
    "Die Funktion liest die Datei und gibt die Zeilen zur\u00fcck, wenn sie nicht leer ist. Sonst wird ein Fehler "
    "ausgegeben, und der Aufruf bricht mit einer Meldung ab, die den Pfad nennt.",
]


@pytest.mark.parametrize("text", CLEAN)
def test_real_text_is_not_salad(text: str) -> None:
    assert labels(message(text)) == []


def test_the_statistics_measure_what_they_say() -> None:
    assert mixed_script_words("among\u0441\u0438\u043b\u0430\u043d\u043d\u044f") == 1
    assert mixed_script_words("G\u0443\u0438\u043d\u0435\u0430") == 0  # one letter of another script: a homoglyph
    assert mixed_script_words("COPY-\u10d8\u10e1") == 0
    assert function_share("short text") is None
    assert function_share(CLEAN[0]) is not None and function_share(CLEAN[0]) > thresholds()["function_share"]
    share = function_share(REAL_WORD_SALAD)
    assert share is not None and share < thresholds()["function_share"]
    assert labels(message(REAL_WORD_SALAD)) == []  # off by default: measured, not worth its cost
    limits = thresholds()
    assert limits["mixed_script"] >= 1 and 0 < limits["function_share"] < 0.2  # calibrated, not the defaults
