"""Corruption as real engines produce it (issue 18): every tool-call family vLLM ships, special tokens, loops in
short fragments, near-missed names; and the quoted or discussed forms that must stay clean. The real-world
corpus (test_corpus.py) measures the rates; these pin one behaviour each.
"""

from __future__ import annotations

import pytest

from eval.classify import Context, ToolSpec
from eval.classify.messages import classify_message
from tests.unit.classify.helpers import bash, call, message

WEATHER = [ToolSpec("get_weather", ("city",), ("city",)), ToolSpec("get_time")]


def wild(msg: dict, tools: list[ToolSpec] | None = None, prompt: str | None = None) -> list[str]:
    """Classified as a pasted reply: format unknown (every family), tools as given (None: nothing assumed)."""
    if prompt is not None:
        msg = dict(msg, prompt=prompt)
    ctx = Context.build("auto", tools, tools_known=tools is not None)
    return classify_message(msg, ctx)["labels"]


LEAKS = [
    # DeepSeek V3/R1, full-width bars and ASCII.
    "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{}\n```<｜tool▁call▁end｜>",
    "<|tool_calls_begin|><|tool_call_begin|>get_weather<|tool_sep|>{}<|tool_call_end|><|tool_calls_end|>",
    "<｜DSML｜function_calls>",
    # Kimi K2.
    '<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{"city": "x"}',
    # Llama 3/4.
    '<|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"}}<|eom_id|>',
    # MiniMax / Anthropic-style invoke XML.
    '<invoke name="get_weather">\n<parameter name="city">Paris</parameter>\n</invoke>',
    # gpt-oss harmony, with tokens and with the tokens rendered empty.
    '<|start|>assistant<|channel|>commentary to=functions.get_weather<|message|>{"city":"Paris"}<|call|>',
    "analysisThe user wants the weather.assistantfinalIt is sunny.",
    # Granite, InternLM, GLM 4.5/4.7, Gemma 4, Mistral.
    '<|tool_call|>[{"name": "get_weather", "arguments": {"city": "Paris"}}]',
    '<|action_start|><|plugin|>\n{"name": "get_weather", "parameters": {"city": "Paris"}}<|action_end|>',
    "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call>",
    '<|tool_call>call:get_weather{city:<|"|>Paris<|"|>}<tool_call|>',
    '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}',
    # A streaming parser left the start of a qwen3_coder call behind.
    "<function",
]


@pytest.mark.parametrize("text", LEAKS)
def test_every_family_is_found_without_knowing_the_format(text):
    assert "leaked_tool_xml" in wild(message(text))


OFFERED_CALLS_AS_TEXT = [
    '{"name": "get_weather", "parameters": {"city": "Paris"}}',  # Llama 3 JSON
    '[{"name": "get_weather", "arguments": {"city": "Paris"}}]',  # a JSON list (Mistral, Granite)
    '[get_weather(city="Paris"), get_time()]',  # pythonic (Llama 4, Olmo)
]


@pytest.mark.parametrize("text", OFFERED_CALLS_AS_TEXT)
def test_calls_of_offered_tools_written_as_text(text):
    assert wild(message(text), tools=WEATHER) == ["leaked_tool_xml"]
    assert wild(message(text)) == []  # without the request's tools it is just JSON or code


DISCUSSED = [
    "DeepSeek wraps calls in `<｜tool▁calls▁begin｜>` and Llama 3 prefixes `<|python_tag|>`.",
    "The template ends every turn with `<|im_end|>`; the parser strips it.",
    'The stop list is ["<|im_end|>", "</s>"] in the config.',
    "Qwen3 writes the call as <tool_call> followed by JSON, which the hermes parser reads.",
    "```python\nSPECIAL = {'<|eot_id|>', '<|eom_id|>'}\n```",
    "The model printed <|channel|> and stopped, so the router never saw the final channel.",
    "GPT-2 separates documents with <|endoftext|>.",
    "Stop on the end token (<|eot_id|>) as well.",
    'Use <invoke name="x"> blocks only in `system` prompts for Claude-style agents.',
]


@pytest.mark.parametrize("text", DISCUSSED)
def test_quoted_or_discussed_markup_stays_clean(text):
    assert wild(message(text)) == [] and wild(message("", reasoning=text, calls=[bash("ls")])) == []


SPECIAL_TOKENS = [
    "The answer is 4.<|im_end|>",
    "apple<eos>",
    "<s><s><s><s><s><s>",
    "Done.\n<|EOT|>\n<|EOT|>\n<|EOT|>",
    "Sure!<｜end▁of▁sentence｜>",
    "Here you go.<|eot_id|><|start_header_id|>assistant<|end_header_id|>",
    "Text<pad><pad><pad><pad>",
]


@pytest.mark.parametrize("text", SPECIAL_TOKENS)
def test_special_tokens_as_text(text):
    assert "leaked_special_token" in wild(message(text))


SHORT_LOOPS = [
    " is is is is is is is is is is",
    "the value is 0-th-th-th-th-th-th-th-th-th-th-th-th-th-th",
    "I think the, the, the, the, the, the, the, the, the, the, the",
    "结果是" + "这个问题的答案是四。" * 6,
    "M" * 70,
    "Weather: " + "sunny and warm, " * 6,
]


@pytest.mark.parametrize("text", SHORT_LOOPS)
def test_loops_a_short_fragment_already_shows(text):
    assert "degenerate_repetition" in wild(message(text))


LEGIT_REPETITION = [
    "ha ha ha ha, that is a good one",
    "哈哈哈哈哈哈哈哈哈哈",
    "| a | b |\n|---|---|---|---|---|---|---|---|---|---|---|\n| 1 | 2 |",
    "zeros = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]",
    "| N/A | N/A | N/A | N/A | N/A | N/A |",
    "Very, very, very good.",
    "-" * 80 + "\nSUMMARY\n" + "=" * 80,
    "sk-xxxxxxxxxxxxxxxxxxxxxxxxxxxx is a placeholder key",
    "| sign | exponent | fraction |\n| X | " + "X" * 52 + " |",  # a bit diagram
    "GPT-2's byte-level BPE writes a space as `Ġ`: `ĠreturnĠx` is ` return x`.",
]


@pytest.mark.parametrize("text", LEGIT_REPETITION)
def test_legitimate_short_repetition_stays_clean(text):
    assert wild(message(text)) == []


def test_a_loop_the_model_quotes_from_its_prompt_is_clean():
    loop = "ERROR ERROR ERROR ERROR ERROR ERROR ERROR ERROR ERROR ERROR ERROR"
    assert wild(message(f"The log says: {loop}"), prompt=f"Why does my log say {loop}?") == []


NEAR_MISSES = [
    ("the flag isVisibleWhenInTBs", "Set isVisibelWhenInTBs to false."),  # two letters swapped
    ("def calculate_total(items):", "Call calculate_totl(items) here."),  # one letter dropped
    ("process_data = load()", "Then proccess_data is reused."),  # one letter doubled
    ("rule 43063446-b519-4acc-9c4d-cc9eb8773a92", "Rule 43063446-b519-4acc-9c4d-cceb8773a92 applies."),  # UUID
    ("see src/utils/helpers.py", "I edited src/utils/helpres.py as asked."),  # a path
    ("import sklearn.preprocessing", "Then import sklearn.preprocesing again."),  # a dotted module name
]


@pytest.mark.parametrize(("prompt", "reply"), NEAR_MISSES)
def test_names_from_the_prompt_with_a_slip(prompt, reply):
    assert wild(message(reply), prompt=prompt) == ["identifier_corruption"]


NEW_NAMES = [
    ("def parse(x):", "I added parse_args and parser_args."),  # new names built from old ones
    ("items = get_items()", "get_item returns one; get_items returns all."),
    ("form_data = {}", "Rename form_data to from_data? No."),  # both appear: the written one is in context
    ("user_name = 'x'", "Now set_user_name and get_user_name exist."),
    ("max_length = 10", "MAX_LENGTH and Max_Length are different."),  # case changes
    ("version 4.2.1 of the tool", "It works on 4.2.x and 4.3.0."),
    ("read config.yaml first", "Also read config.yml and src/utils/helper.py."),  # short segments, new files
]


@pytest.mark.parametrize(("prompt", "reply"), NEW_NAMES)
def test_new_names_are_not_slips(prompt, reply):
    assert wild(message(reply), prompt=prompt) == []


def test_tool_choice_decides_whether_a_text_reply_misses_a_call():
    ctx = Context.build("auto", WEATHER, tool_choice="required")
    assert classify_message(message("It is sunny."), ctx)["labels"] == ["missing_tool_call"]
    ctx = Context.build("auto", WEATHER, tool_choice="none")
    assert classify_message(message("It is sunny."), ctx)["labels"] == []
    ctx = Context.build("auto", WEATHER, tool_choice="auto")
    assert classify_message(message("It is sunny."), ctx)["labels"] == []


def test_replacement_character_named_in_inline_code_is_clean():
    assert wild(message("Invalid bytes become `\ufffd` (U+FFFD) when decoding.")) == []
    assert wild(message("Invalid bytes become caf\ufffd here.")) == ["replacement_char"]


def test_metaspace_marker_as_text_is_a_byte_piece_but_sparklines_are_not():
    assert wild(message(" \u2581\u2581 three spaces")) == ["byte_piece"]
    assert wild(message("load: \u2581\u2582\u2583\u2585\u2587")) == []


def test_an_offered_tool_with_junk_glued_on_is_malformed_a_new_name_is_unknown():
    assert wild(message("", calls=[call("get_weather<|channel|>commentary", {"city": "x"})]), WEATHER) == [
        "malformed_tool_call"
    ]
    assert wild(message("", calls=[call("search_web", {"q": "x"})]), WEATHER) == ["unknown_tool"]


def test_a_stray_markdown_mark_is_no_content():
    # lmstudio-bug-tracker#1592: the reasoning parser left `\n\n* ` as content after 8 KB of reasoning.
    assert wild(message("\n\n* ", reasoning="Let me think about the XML tags and the parser.")) == ["reasoning_only"]
    assert wild(message("👍", reasoning="The user thanked me.")) == []
    assert wild(message("- ")) == ["empty_response"]
