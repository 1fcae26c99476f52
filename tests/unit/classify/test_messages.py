"""The standalone form: one output line per input message, in order; tool schemas from a file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eval.classify import Context
from eval.classify.formats import normalize_format
from eval.classify.messages import classify_file, classify_lines, load_tools
from tests.unit.classify.helpers import bash, call, message


def test_one_output_line_per_message_in_order(tmp_path):
    msgs = [
        message("", calls=[bash("ls")]),
        message("caf\ufffd", calls=[bash("ls")]),
        message("", calls=[call("submit", "{}")]),
        message("<tool_call>\n<function=bash>\n<parameter=command>\nls\n</parameter>\n</function>\n</tool_call>"),
    ]
    src, dst = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    src.write_text("".join(json.dumps(m) + "\n" for m in msgs), encoding="utf-8")
    assert classify_file(src, dst, "qwen3_coder", None) == 4
    out = [json.loads(line) for line in dst.read_text(encoding="utf-8").splitlines()]
    # No tools given: nothing is assumed about them (no missing_tool_call, `submit` is not unknown).
    assert [o["labels"] for o in out] == [[], ["replacement_char"], [], ["leaked_tool_xml"]]
    assert out[0] == {"labels": [], "evidence": []}


def test_a_line_that_is_not_json_gets_an_error_record():
    out = [json.loads(line) for line in classify_lines(['{"content": "ok"', json.dumps(message("x"))], Context())]
    assert out[0]["labels"] == [] and out[0]["error"].startswith("not JSON")
    assert out[1]["labels"] == ["missing_tool_call"]


def test_tool_schemas_from_a_file(tmp_path):
    tools = tmp_path / "tools.json"
    schema = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
    tools.write_text(json.dumps([{"type": "function", "function": {"name": "view", "parameters": schema}}]))
    specs = load_tools(tools)
    assert [(s.name, s.required) for s in specs] == [("view", ("path",))]
    src, dst = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    src.write_text(
        json.dumps(message("", calls=[call("view", {})])) + "\n" + json.dumps(message("", calls=[bash("ls")]))
    )
    classify_file(src, dst, "auto", specs)
    out = [json.loads(line) for line in dst.read_text().splitlines()]
    assert out[0]["labels"] == ["malformed_tool_call"] and "'path'" in out[0]["evidence"][0]["detail"]
    assert out[1]["labels"] == ["unknown_tool"]  # bash is not offered here


def test_bad_tool_files_are_refused(tmp_path):
    bad = tmp_path / "tools.json"
    bad.write_text('{"name": "x"}')
    with pytest.raises(ValueError, match="JSON list"):
        load_tools(bad)
    bad.write_text('[{"type": "function"}]')
    with pytest.raises(ValueError, match=r"function\.name"):
        load_tools(bad)


@pytest.mark.parametrize(
    ("parser", "fmt"),
    [
        ("qwen3_coder", "qwen3_coder"),
        ("hermes", "hermes"),
        ("openai", "harmony"),
        ("llama3_json", "llama"),
        ("mistral", "mistral"),
        (None, "auto"),
        ("something_new", "auto"),
        ("  Qwen3_XML ", "qwen3_coder"),
    ],
)
def test_tool_call_parser_names_map_to_formats(parser, fmt):
    assert normalize_format(parser) == fmt


def test_tokenizer_files_load_and_decide_byte_pieces(tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers import decoders, models, pre_tokenizers

    from eval.classify.tokenizer import TokenizerError, load_tokenizer

    vocab = {c: i for i, c in enumerate(sorted(pre_tokenizers.ByteLevel.alphabet()))}
    tok = tokenizers.Tokenizer(models.BPE(vocab=vocab, merges=[]))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.save(str(tmp_path / "tokenizer.json"))
    loaded = load_tokenizer(tmp_path)  # a directory holding tokenizer.json
    assert loaded.decode(tok.encode("héllo").ids) == "héllo"
    with pytest.raises(TokenizerError):
        load_tokenizer(tmp_path / "missing")
    text = "ĊĠĠreturnĠx"  # generated as such: the ids decode to this very text
    src, dst = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    src.write_text(json.dumps(message(text, calls=[bash("ls")], token_ids=tok.encode(text).ids)) + "\n")
    classify_file(src, dst, "auto", None, load_tokenizer(tmp_path / "tokenizer.json"))
    assert json.loads(dst.read_text())["labels"] == []
    classify_file(src, dst, "auto", None)
    assert json.loads(dst.read_text())["labels"] == ["byte_piece"]


CORPUS = Path(__file__).parent / "data" / "messages.jsonl"


def _corpus() -> list[dict]:
    return [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("msg", _corpus(), ids=lambda m: m["name"])
def test_realistic_corpus(msg):
    """Hand-written realistic replies (healthy agent traffic and the seed incident's phenomena), each with the
    labels it must get (`expect`): the classifier ignores the extra keys."""
    from eval.classify.messages import classify_message

    assert classify_message(msg, Context.build("qwen3_coder"))["labels"] == msg["expect"]


def test_line_separators_inside_json_strings_do_not_split_messages(tmp_path):
    src, dst = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    msg = message("first\u2028second\x85third\u2029", calls=[bash("ls")])
    src.write_text(json.dumps(msg, ensure_ascii=False) + "\n", encoding="utf-8")
    assert classify_file(src, dst, "auto", None) == 1
    assert json.loads(dst.read_text(encoding="utf-8")) == {"labels": [], "evidence": []}


WEATHER = {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}


def test_a_plain_chat_reply_without_request_context_gets_no_label():
    out = classify_lines(
        [json.dumps(message("Paris is sunny today.", finish="stop"))], Context.build(tools_known=False)
    )
    assert json.loads(out[0])["labels"] == []


def test_tools_on_the_line_are_the_request_context():
    ctx = Context.build(tools_known=False)
    line = dict(message('{"name": "get_weather", "parameters": {"city": "Paris"}}'), tools=[WEATHER])
    assert json.loads(classify_lines([json.dumps(line)], ctx)[0])["labels"] == ["leaked_tool_xml"]
    # The same text without tools offered is just JSON.
    plain = message('{"name": "get_weather", "parameters": {"city": "Paris"}}')
    assert json.loads(classify_lines([json.dumps(plain)], ctx)[0])["labels"] == []


def test_a_request_response_pair():
    request = {"messages": [{"role": "user", "content": "Weather?"}], "tools": [WEATHER], "tool_choice": "required"}
    response = {"choices": [{"message": {"role": "assistant", "content": "It is sunny."}, "finish_reason": "stop"}]}
    out = classify_lines([json.dumps({"request": request, "response": response})], Context.build(tools_known=False))
    assert json.loads(out[0])["labels"] == ["missing_tool_call"]  # tool_choice required, no call
    request["tool_choice"] = "auto"
    out = classify_lines([json.dumps({"request": request, "response": response})], Context.build(tools_known=False))
    assert json.loads(out[0])["labels"] == []  # a text answer is allowed


def test_an_offered_tool_name_with_a_special_token_glued_on():
    request = {"tools": [WEATHER]}
    response = message("", calls=[call("get_weather<|channel|>commentary", {"city": "Paris"})])
    out = classify_lines([json.dumps({"request": request, "response": response})], Context.build(tools_known=False))
    assert json.loads(out[0])["labels"] == ["malformed_tool_call"]
