"""Issue 30, classifier 1.4.0: chat-template markers that are not `<|...|>` tokens, a marker cut by the end of the
reply, a letter dropped inside a directory of a path, closing tags of every call family left at the end of an
argument, and artifacts that code or data shown in a fence quotes."""

from __future__ import annotations

import pytest

from eval.classify import Context, ToolSpec
from eval.classify.messages import classify_message
from tests.unit.classify.helpers import bash, call, classify, message


def wild(msg: dict) -> list[str]:
    """Classified as a pasted reply: every family, nothing assumed about tools."""
    return classify_message(msg, Context.build("auto", tools_known=False))["labels"]


TEMPLATE_LEAKS = [
    "<s>[INST] <<SYS>>\nYou are helpful.\n<</SYS>>\n\nHi [/INST]",  # Llama 2
    "Sure, here it is.[/INST]",
    "The answer is 4.\n[INST] And 5?",
    "[AVAILABLE_TOOLS] [] [/AVAILABLE_TOOLS]",  # Mistral v3 control tokens
    "Done.[SYSTEM_PROMPT]",
    "[gMASK]<|user|>hi",  # ChatGLM
    "ok<reserved_106>next",  # Baichuan
    "Hello<_end><_user>",  # TeleFLM
    "ok]~b]ai\nhi[e~[",  # MiniMax M2
    "<extra_id_1>User\nhi",  # Nemotron-4
    "x = 1<fim_middle>",  # StarCoder FIM
    "word[control_11] salad[control_234]",  # Mistral reserved control tokens
    "Let me check the weather.<|tool_call",  # a marker cut by the end of the stream
]


@pytest.mark.parametrize("text", TEMPLATE_LEAKS)
def test_template_markers_as_text(text):
    assert "leaked_special_token" in wild(message(text))


TEMPLATE_MENTIONS = [
    "Wrap the prompt in [INST] and [/INST] tags.",
    "Llama 2 uses `[INST]` and `<<SYS>>` markers.",
    "```\n<s>[INST] {prompt} [/INST]\n```",
    '```python\nprompt += f"[INST] {content} [/INST]"\n```',
    'PATTERN = r"repository/(?P<_end>.*)$"',  # a regex's named group
    "The `<|` prefix opens every special token.",
]


@pytest.mark.parametrize("text", TEMPLATE_MENTIONS)
def test_template_markers_named_or_quoted_stay_clean(text):
    assert wild(message(text)) == []


def test_markup_in_a_string_literal_of_a_fence_is_code():
    code = '```python\nprompts = ["<|start|>user<|message|>How to learn English?<|end|><|start|>assistant"]\n```'
    assert wild(message(code)) == []
    # The same markup emitted as text is a leak.
    assert "leaked_tool_xml" in wild(message("<|start|>assistant<|channel|>commentary to=functions.x<|message|>{}"))


def test_a_replacement_char_alone_in_a_fenced_literal_is_named():
    assert wild(message('Partial bytes decode as:\n```json\n{"token": "\ufffd"}\n```')) == []
    assert "replacement_char" in wild(message("```python\nprint('你好\ufffd')\n```"))
    assert "replacement_char" in wild(message('The token "\ufffd" came back.'))


LS = "/media/data-mount/dir/project/etc/themes/base/widgets/date.js\nsrc/pkg/tests/test_models.py\n"


def test_a_letter_dropped_inside_a_directory_of_a_path_is_found():
    msg = message("", calls=[bash("cat /media/data-ount/dir/project/etc/themes/base/widgets/date.js")])
    result = classify(dict(msg, prompt=[{"role": "tool", "content": LS}]))
    assert "identifier_corruption" in result["labels"]


@pytest.mark.parametrize(
    "written",
    [
        "src/pkg/test/test_models.py",  # the last letter of a directory: test/ beside tests/
        "src/pkg/ests/test_models.py",  # the first letter
        "src/pkg/tests/test_model.py",  # the file name
    ],
)
def test_names_that_vary_at_a_directory_edge_stay_clean(written):
    msg = message("", calls=[bash(f"cat {written}")])
    assert "identifier_corruption" not in classify(dict(msg, prompt=[{"role": "tool", "content": LS}]))["labels"]


WRITE = [ToolSpec("Write", ("file_path", "content"), ("file_path", "content"))]


def write(content: str) -> list[str]:
    msg = message("", calls=[call("Write", {"file_path": "PLAN.md", "content": content})])
    return classify_message(msg, Context.build("auto", WRITE))["labels"]


@pytest.mark.parametrize(
    "tail",
    [
        "\n</parameter>\n</function>",  # qwen3_coder
        "\n</content>\n</invoke>",  # MiniMax / Anthropic-style invoke
        "</arg_value>",  # GLM
        "\n</tool_calls>",  # Jamba
    ],
)
def test_closing_tags_of_every_family_left_at_the_end_of_an_argument(tail):
    assert "malformed_tool_call" in write("# Plan\n\n- [ ] Wire the reviewer in." + tail)


@pytest.mark.parametrize(
    "content",
    [
        "<calls><invoke>\n<x/>\n</invoke></calls>",  # an XML file whose element the value opened
        's = "</invoke>"',  # a quoted tag in code
        "</invoke> is the closing tag; then the next line.",
    ],
)
def test_closing_tags_in_an_ordinary_file_stay_clean(content):
    assert write(content) == []
