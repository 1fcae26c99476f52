"""Trajectory level: the labels.json record, turn order, first corrupted turn, history awareness."""

from __future__ import annotations

import json

from eval.classify import CLASSIFIER_VERSION, DETECTORS, LABELS, SEVERITY, Context, classify_trajectory
from tests.unit.classify.helpers import bash, call


def record(turn: int, content: str = "", calls=None, observation: str = "", finish: str = "tool_calls", **kw):
    out = {
        "schema_version": 1,
        "turn": turn,
        "request_id": f"req-{turn}",
        "finish_reason": finish,
        "content": content,
        "reasoning_content": kw.pop("reasoning", "Let me look at the code."),
        "tool_calls": calls if calls is not None else [bash("ls")],
        "token_ids": None,
        "observation": observation,
        "feedback": None,
        "error": None,
    }
    out.update(kw)
    return out


def test_the_table_has_every_label_of_the_issue_in_order():
    assert LABELS == (
        "replacement_char",
        "byte_piece",
        "leaked_tool_xml",
        "leaked_special_token",
        "malformed_tool_call",
        "unknown_tool",
        "missing_tool_call",
        "empty_response",
        "reasoning_only",
        "degenerate_repetition",
        "identifier_corruption",
        "truncated",
    )
    assert all(r.severity in ("error", "warning", "info") for r in DETECTORS)
    assert SEVERITY["truncated"] == "warning" and SEVERITY["replacement_char"] == "error"
    assert SEVERITY["unknown_tool"] == "warning" and SEVERITY["leaked_special_token"] == "error"


def test_a_clean_trajectory():
    records = [record(0, observation="setup.py\nsrc/"), record(1, calls=[call("submit", {})])]
    out = classify_trajectory(records, Context.build("qwen3_coder")).to_json()
    assert out["corrupted"] is False and out["first_corrupted_turn"] is None and out["turns"] == []
    assert out["schema_version"] == 1 and out["classifier_version"] == CLASSIFIER_VERSION
    assert set(out["labels"]) == set(LABELS) and not any(out["labels"].values())
    json.dumps(out)


def test_counts_first_corrupted_turn_and_warnings():
    records = [
        record(0, content="Thinking", calls=[], observation="Please call a tool."),  # missing call: a warning
        record(1, content="caf\ufffd"),
        record(2, content="", calls=[], reasoning=""),  # empty (error) + missing (warning)
        record(3, calls=[call("submit", {})]),
    ]
    out = classify_trajectory(records, Context.build("qwen3_coder")).to_json()
    assert out["first_corrupted_turn"] == 1 and out["corrupted"] is True
    assert out["labels"]["missing_tool_call"] == 2 and out["labels"]["replacement_char"] == 1
    assert [t["turn"] for t in out["turns"]] == [0, 1, 2]
    assert out["turns"][2]["labels"] == ["missing_tool_call", "empty_response"]


def test_warnings_alone_are_not_corruption():
    records = [record(0, content="", finish="length"), record(1, calls=[call("submit", {})])]
    out = classify_trajectory(records, Context.build("qwen3_coder")).to_json()
    assert out["labels"]["truncated"] == 1 and out["corrupted"] is False


def test_tool_results_make_copied_markup_legitimate():
    parser = 'START = "<tool_call>"\nFN = re.compile(r"<function=(\\w+)>")\n'
    records = [
        record(0, observation=parser),
        record(1, content='The regex\nFN = re.compile(r"<function=(\\w+)>")\nreads the name.'),
        record(2, calls=[call("submit", {})]),
    ]
    out = classify_trajectory(records, Context.build("qwen3_coder")).to_json()
    assert out["labels"]["leaked_tool_xml"] == 0


def test_a_leak_repeated_later_is_still_a_leak():
    leak = "<tool_call>\n<function=bash>\n<parameter=command>\nls\n</parameter>\n</function>\n</tool_call>"
    records = [record(0, content=leak, calls=[]), record(1, content=leak, calls=[]), record(2, calls=[])]
    out = classify_trajectory(records, Context.build("qwen3_coder")).to_json()
    assert out["labels"]["leaked_tool_xml"] == 2


def test_identifiers_from_earlier_tool_results_and_arguments():
    records = [
        record(0, calls=[bash("ls django/db/models")], observation="query.py\nsql/\nfields/\n"),
        record(1, calls=[bash("cat django/db/models/query.py")], observation="class QuerySet:\n"),
        record(2, calls=[bash("sed -n 1,20p django/db/modeIs/query.py")]),  # l -> I inside a path
        record(3, calls=[call("submit", {})]),
    ]
    out = classify_trajectory(records, Context.build("qwen3_coder")).to_json()
    assert out["labels"]["identifier_corruption"] == 1 and out["first_corrupted_turn"] == 2


def test_the_last_turn_without_a_finish_tool_may_answer_in_text():
    from eval.classify import ToolSpec

    tools = [ToolSpec("bash", ("command",))]
    records = [record(0), record(1, content="All tests pass now.", calls=[], finish="stop")]
    out = classify_trajectory(records, Context.build("hermes", tools)).to_json()
    assert out["labels"]["missing_tool_call"] == 0
    records = [record(0, content="Let me think.", calls=[]), record(1, content="Done.", calls=[])]
    out = classify_trajectory(records, Context.build("hermes", tools)).to_json()
    assert out["labels"]["missing_tool_call"] == 1 and out["turns"][0]["turn"] == 0


def test_turn_numbers_come_from_the_records():
    records = [record(5, content="\ufffd"), record(6, calls=[call("submit", {})])]
    out = classify_trajectory(records, Context.build("auto")).to_json()
    assert out["first_corrupted_turn"] == 5


def test_a_turn_that_failed_for_infrastructure_reasons_is_not_labelled():
    records = [
        record(0, content="", calls=[], reasoning="", error="HTTP 503 from http://127.0.0.1:8000"),
        record(1, calls=[call("submit", {})]),
    ]
    out = classify_trajectory(records, Context.build("qwen3_coder")).to_json()
    assert out["turns"] == [] and out["corrupted"] is False


def test_a_parser_seen_earlier_does_not_excuse_a_later_leak():
    parser_test = 'OUTPUT = """\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"""\n'
    leak = "<tool_call>\n<function=bash>\n<parameter=command>\nls\n</parameter>\n</function>\n</tool_call>"
    records = [record(0, observation=parser_test), record(1, content=leak, calls=[]), record(2, calls=[])]
    out = classify_trajectory(records, Context.build("qwen3_coder")).to_json()
    assert out["labels"]["leaked_tool_xml"] == 1
    texts = [e["text"] for e in out["turns"][0]["evidence"] if e["label"] == "leaked_tool_xml"]
    assert "<tool_call>" in texts and "<function=bash>" in texts
