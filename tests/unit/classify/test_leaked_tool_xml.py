"""`leaked_tool_xml`: tool-call markup of the served format in content or reasoning instead of a call."""

from __future__ import annotations

import pytest

from tests.unit.classify.helpers import bash, call, classify, labels, message

QWEN_LEAK = (
    "I'll look at the failing test first.\n\n<tool_call>\n<function=bash>\n<parameter=command>\n"
    'grep -n "def test_" tests/test_runner.py\n</parameter>\n</function>\n</tool_call>'
)

POSITIVES = [
    ("qwen3_coder", message(QWEN_LEAK)),
    # Inside the reasoning: the reasoning parser swallowed the call.
    ("qwen3_coder", message("", reasoning="Let me check.\n<function=bash>\n<parameter=command>\nls\n</parameter>")),
    # Partly parsed: one structured call, a second one left as text.
    ("qwen3_coder", message("<function=submit>\n</function>", calls=[bash("git diff")])),
    ("hermes", message('<tool_call>\n{"name": "bash", "arguments": {"command": "ls -la"}}\n</tool_call>')),
    ("mistral", message('[TOOL_CALLS]bash[ARGS]{"command": "pytest -x"}')),
    ("llama", message('<|python_tag|>{"name": "bash", "parameters": {"command": "ls"}}')),
    ("llama", message('{"name": "bash", "parameters": {"command": "cat setup.py"}}')),
    (
        "harmony",
        message('<|channel|>commentary to=functions.bash <|constrain|>json<|message|>{"command":"ls"}<|call|>'),
    ),
    ("auto", message('I will run it: {"name": "bash", "arguments": {"command": "make test"}}')),
    # Fenced, but a complete call of an offered tool: still a call written as text.
    (
        "qwen3_coder",
        message("```xml\n<tool_call>\n<function=bash>\n<parameter=command>\nls\n</parameter>\n</function>\n```"),
    ),
]


@pytest.mark.parametrize(("fmt", "msg"), POSITIVES)
def test_leaked_markup_is_found(fmt, msg):
    result = classify(msg, fmt)
    assert "leaked_tool_xml" in result["labels"]
    ev = [e for e in result["evidence"] if e["label"] == "leaked_tool_xml"]
    field = msg["content"] if ev[0]["field"] == "content" else msg["reasoning_content"]
    assert field[ev[0]["start"] : ev[0]["end"]] == ev[0]["text"]


def test_the_whole_qwen_call_is_evidence():
    ev = classify(message(QWEN_LEAK))["evidence"]
    texts = [e["text"] for e in ev if e["label"] == "leaked_tool_xml"]
    assert texts == [
        "<tool_call>",
        "<function=bash>",
        "<parameter=command>",
        "</parameter>",
        "</function>",
        "</tool_call>",
    ]


PATCH = """diff --git a/vllm/tool_parsers/qwen3coder_tool_parser.py b/vllm/tool_parsers/qwen3coder_tool_parser.py
@@ -40,7 +40,7 @@ class Qwen3CoderToolParser(ToolParser):
-        self.tool_call_start_token: str = "<tool_call>"
+        self.tool_call_start_token: str = "<tool_call>\\n"
         self.tool_call_end_token: str = "</tool_call>"
"""

NEGATIVES = [
    # A patch that edits a tool-call parser: markup inside the tool arguments is never a leak.
    ("qwen3_coder", message("", calls=[bash(f"cat > /tmp/fix.patch <<'EOF'\n{PATCH}EOF\ngit apply /tmp/fix.patch")])),
    # The model discusses the markup in code spans or fences.
    (
        "qwen3_coder",
        message(
            "The parser now strips the trailing newline after `<tool_call>` and `</tool_call>`.", calls=[bash("ls")]
        ),
    ),
    ("hermes", message('Fixed: the start token is\n```python\nSTART = "<tool_call>"\n```\n', calls=[bash("ls")])),
    ("qwen3_coder", message("", reasoning='The regex looks for "<tool_call>" then a newline.', calls=[bash("ls")])),
    # XML and HTML that are not tool-call markup.
    (
        "qwen3_coder",
        message('The template renders <function>name</function> inside <div class="fn">.', calls=[bash("ls")]),
    ),
    # Another family's markup is not checked when the format is known.
    ("qwen3_coder", message("Mistral models emit [TOOL_CALLS] before the JSON.", calls=[bash("ls")])),
    # JSON mentioning a tool that is not offered.
    ("auto", message('Config: {"name": "pytest", "arguments": ["-x"]}', calls=[bash("ls")])),
    ("auto", message("测试 😀 <0.5 > 0.2 [x] {y}", calls=[bash("ls")])),
]


@pytest.mark.parametrize(("fmt", "msg"), NEGATIVES)
def test_legitimate_markup_is_not_a_leak(fmt, msg):
    assert "leaked_tool_xml" not in labels(msg, fmt)


def test_markup_quoted_from_a_tool_result_is_not_a_leak():
    source = 'class Parser:\n    START = "<tool_call>"\n    FN = re.compile(r"<function=(.*?)>")\n'
    msg = message(
        'The line\n    FN = re.compile(r"<function=(.*?)>")\nis where the name is read.',
        calls=[bash("sed -n 1,40p parser.py")],
        prompt=[{"role": "tool", "content": source}],
    )
    assert "leaked_tool_xml" not in labels(msg)


def test_agent_without_structured_calls_is_not_checked():
    from eval.classify import Context
    from eval.classify.messages import classify_message

    ctx = Context.build("qwen3_coder", structured=False)
    assert "leaked_tool_xml" not in classify_message(message(QWEN_LEAK), ctx)["labels"]


def test_an_empty_content_next_to_a_valid_call_is_clean():
    assert labels(message("", calls=[call("bash", {"command": "ls"})])) == []
    assert labels(message(None, calls=[call("bash", {"command": "ls"})])) == []
