"""`empty_response`, `reasoning_only`, `truncated`."""

from __future__ import annotations

from tests.unit.classify.helpers import bash, classify, labels, message


def test_empty_response():
    assert labels(message("")) == ["missing_tool_call", "empty_response"]
    assert labels(message(None, reasoning="  \n")) == ["missing_tool_call", "empty_response"]
    assert labels({"role": "assistant"}) == ["missing_tool_call", "empty_response"]


def test_empty_content_with_a_call_is_not_empty():
    assert labels(message("", calls=[bash("ls")])) == []


def test_reasoning_only():
    msg = message("", reasoning="The failing test expects a ValueError when the date is naive. Let me")
    result = classify(msg)
    assert result["labels"] == ["missing_tool_call", "reasoning_only"]
    ev = next(e for e in result["evidence"] if e["label"] == "reasoning_only")
    assert ev["field"] == "reasoning_content" and ev["text"].startswith("The failing test")


def test_reasoning_with_a_call_or_an_answer_is_not_reasoning_only():
    assert labels(message("", reasoning="Check the tests.", calls=[bash("pytest -q")])) == []
    assert "reasoning_only" not in labels(message("Done.", reasoning="All good."))


def test_truncated():
    result = classify(message("The traceback shows that the", reasoning="Long thought", finish="length"))
    assert result["labels"] == ["truncated"]
    assert result["evidence"][0]["field"] == "finish_reason"


def test_reasoning_cut_by_max_tokens_is_reasoning_only_and_truncated():
    # Issue 30: a reply that ends at max_tokens still in its reasoning never answered: both facts are labels.
    assert labels(message("", reasoning="Step 1: read the file. Step 2:", finish="length")) == [
        "reasoning_only",
        "truncated",
    ]
    # Without a reasoning parser the reasoning stays in content, in a think block that never closes.
    assert labels(message("<think>\nStep 1: read the file. Step 2:", finish="length")) == [
        "reasoning_only",
        "truncated",
    ]
    assert labels(message("<think>Step 1.</think>\nThe answer is", finish="length")) == ["truncated"]


def test_truncated_with_a_call_is_still_truncated():
    assert labels(message("", calls=[bash("ls")], finish="length")) == ["truncated"]
