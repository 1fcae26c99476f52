"""`malformed_tool_call` and `missing_tool_call`."""

from __future__ import annotations

import pytest

from eval.classify import ToolSpec
from tests.unit.classify.helpers import bash, call, classify, labels, message

EDITOR = ToolSpec("str_replace_editor", required=("command", "path"), properties=("command", "path", "old_str"))
TOOLS = [ToolSpec("bash", ("command",), ("command",)), ToolSpec("submit"), EDITOR]

MALFORMED = [
    message("", calls=[call("bassh", {"command": "ls"})]),  # unknown tool
    message("", calls=[call("", {"command": "ls"})]),  # empty name
    message("", calls=[call("bash", '{"command": "ls -la')]),  # not JSON (cut)
    message("", calls=[call("bash", '["ls"]')]),  # JSON, not an object
    message("", calls=[call("bash", {})]),  # required argument missing
    message("", calls=[call("bash", {"command": "   "})]),  # required argument empty
    message("", calls=[call("bash", {"command": None})]),
    message("", calls=[call("bash", {"command=ls": ""})]),  # key with '='
    message("", calls=[call("bash", {"<parameter=command>": "ls"})]),  # key with markup
    # A value that swallowed the closing tag and the next parameter (qwen3_coder parse slip).
    message("", calls=[call("bash", {"command": "ls -la\n</parameter>\n<parameter=timeout>\n30"})]),
    message("", calls=[call("bash", {"command": "pytest -x tests/\n</parameter>\n</function>"})]),
    # One good call and one broken call.
    message("", calls=[bash("ls"), call("bash", "{command: ls}", index=1)]),
]


@pytest.mark.parametrize("msg", MALFORMED)
def test_malformed_calls_are_found(msg):
    result = classify(msg, tools=TOOLS)
    assert "malformed_tool_call" in result["labels"]
    ev = [e for e in result["evidence"] if e["label"] == "malformed_tool_call"]
    assert ev[0]["field"].startswith("tool_calls[")


def test_evidence_names_the_broken_call():
    result = classify(message("", calls=[bash("ls"), call("bash", "{command: ls}", index=1)]))
    assert {e["field"] for e in result["evidence"]} == {"tool_calls[1].arguments"}


WELL_FORMED = [
    message("", calls=[call("submit", "{}")]),  # `{}` for a tool without required arguments
    message("", calls=[call("submit", "")]),  # empty arguments, same thing
    message(None, calls=[bash("git status")]),  # empty content next to a valid call
    message("", calls=[call("str_replace_editor", {"command": "view", "path": "/repo/setup.py", "extra": 1})]),
    # Code that handles the markup, quoted: a parser fix written through bash.
    message(
        "", calls=[bash('cat > p.py <<\'EOF\'\nEND = "</parameter>"\nif text.endswith("</function>"):\n    pass\nEOF')]
    ),
    message("", calls=[bash("grep -rn '</tool_call>' vllm/tool_parsers/ | head")]),
    message("", calls=[bash("echo '测试 😀' > t.txt && cat t.txt")]),
]


@pytest.mark.parametrize("msg", WELL_FORMED)
def test_well_formed_calls_are_clean(msg):
    assert labels(msg, tools=TOOLS) == []


def test_default_tools_are_bash_and_submit():
    # A clean name that is not offered is a warning (healthy models invent tools); a corrupted one an error.
    assert labels(message("", calls=[call("str_replace_editor", {"command": "view"})])) == ["unknown_tool"]
    assert labels(message("", calls=[call("submit", {})])) == []


CORRUPTED_NAMES = [
    "bassh",  # a near miss of an offered name
    "functions.bash",  # an offered name with a prefix glued on
    "bash<|channel|>commentary",  # a harmony token glued on (ollama/ollama#12132, vllm#32587)
    "assistant<|channel|>analysis",  # the harmony header as the name (ollama/ollama#11704)
    "bash\n",
]


@pytest.mark.parametrize("name", CORRUPTED_NAMES)
def test_corrupted_tool_names_are_malformed(name):
    result = labels(message("", calls=[call(name, {"command": "ls"})]))
    assert result == ["malformed_tool_call"]


def test_without_known_tools_only_corrupted_names_count():
    from eval.classify import Context
    from eval.classify.messages import classify_message

    ctx = Context.build(tools_known=False)
    assert classify_message(message("", calls=[call("get_weather", {"city": "Paris"})]), ctx)["labels"] == []
    bad = message("", calls=[call("get_weather<|channel|>commentary", {})])
    assert classify_message(bad, ctx)["labels"] == ["malformed_tool_call"]


# ---------------------------------------------------------------- missing_tool_call


def test_a_reply_without_a_call_misses_one_when_submit_ends_the_loop():
    result = classify(message("I have fixed the issue by editing the query compiler."))
    assert result["labels"] == ["missing_tool_call"]


def test_a_final_answer_is_fine_when_no_finish_tool_is_offered():
    only_bash = [ToolSpec("bash", ("command",))]
    assert labels(message("The fix is in place; all tests pass."), tools=only_bash) == []
    assert "missing_tool_call" in labels(message("", reasoning="hmm"), tools=only_bash)


def test_leaked_call_is_also_a_missing_call():
    msg = message("<tool_call>\n<function=bash>\n<parameter=command>\nls\n</parameter>\n</function>\n</tool_call>")
    assert labels(msg) == ["leaked_tool_xml", "missing_tool_call"]


def test_a_truncated_reply_is_not_a_missing_call():
    assert labels(message("Let me think about the", finish="length")) == ["truncated"]


def test_agent_parsing_text_actions_never_misses_a_structured_call():
    from eval.classify import Context
    from eval.classify.messages import classify_message

    ctx = Context.build("qwen3_coder", structured=False)
    assert classify_message(message("THOUGHT: look\n```bash\nls\n```"), ctx)["labels"] == []
