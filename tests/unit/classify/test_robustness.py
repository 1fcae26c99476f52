"""A corrupted message never crashes the classifier: property-based tests (hypothesis) over garbage, lone
surrogates, nested structures, wrong types, and 10 MB arguments."""

from __future__ import annotations

import json
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eval.classify import Context, Turn, classify_trajectory
from eval.classify.messages import classify_lines, classify_message
from tests.unit.classify.helpers import bash, call, message

# Every code point, lone surrogates included, plus the characters the detectors look for.
ANY_CHAR = st.characters(codec=None, blacklist_categories=())
SUSPECTS = st.sampled_from(
    [
        "\ufffd",
        "Ġ",
        "Ċ",
        "âĢ",
        "<0xE2>",
        "<tool_call>",
        "<function=bash>",
        "</parameter>",
        "[TOOL_CALLS]",
        "<|call|>",
        '{"name": "bash", "arguments": {',
        "\ud83d",
        "kimi-k3",
        "kimi-kw",
        "the " * 50,
        "\x00",
        "`",
        '"',
    ]
)
TEXT = st.lists(st.one_of(st.text(ANY_CHAR, max_size=40), SUSPECTS), max_size=12).map("".join)
JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | TEXT,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(TEXT, children, max_size=4),
    max_leaves=20,
)
TOOL_CALL = st.one_of(
    JSONISH,
    st.fixed_dictionaries(
        {
            "id": JSONISH,
            "type": st.just("function"),
            "function": st.fixed_dictionaries({"name": TEXT | JSONISH, "arguments": TEXT | JSONISH}),
        }
    ),
)
MESSAGE = st.fixed_dictionaries(
    {},
    optional={
        "role": JSONISH,
        "content": TEXT | JSONISH,
        "reasoning_content": TEXT | JSONISH,
        "tool_calls": st.lists(TOOL_CALL, max_size=3) | JSONISH,
        "finish_reason": st.sampled_from(["stop", "length", "tool_calls"]) | JSONISH,
        "token_ids": st.lists(st.integers(), max_size=8) | JSONISH,
        "prompt": TEXT
        | st.lists(st.dictionaries(st.sampled_from(["role", "content", "tool_calls"]), JSONISH))
        | JSONISH,
        "turn": JSONISH,
        "observation": TEXT | JSONISH,
    },
)
FORMATS = st.sampled_from(["qwen3_coder", "hermes", "mistral", "llama", "harmony", "auto", None, "unknown_parser"])


def _check_output(result: dict, msg: object) -> None:
    assert isinstance(result["labels"], list) and all(isinstance(x, str) for x in result["labels"])
    json.dumps(result, ensure_ascii=False).encode("utf-8")  # writable as UTF-8: no lone surrogates left
    turn = Turn.from_record(msg)
    fields = dict(turn.all_fields())
    for ev in result["evidence"]:
        assert ev["label"] in result["labels"]
        assert 0 <= ev["start"] <= ev["end"]
        if ev["field"] in fields:
            assert ev["end"] <= len(fields[ev["field"]])


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(msg=MESSAGE | JSONISH, fmt=FORMATS)
def test_any_message_is_classified_without_crashing(msg, fmt):
    result = classify_message(msg, Context.build(fmt))
    _check_output(result, msg)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(records=st.lists(MESSAGE | JSONISH, max_size=6), fmt=FORMATS)
def test_any_trajectory_is_classified_without_crashing(records, fmt):
    out = classify_trajectory(records, Context.build(fmt)).to_json()
    json.dumps(out, ensure_ascii=False).encode("utf-8")
    assert out["corrupted"] == (out["first_corrupted_turn"] is not None)


@settings(max_examples=100, deadline=None)
@given(raw=st.lists(st.binary(max_size=200), max_size=8))
def test_any_bytes_as_jsonl_lines(raw):
    lines = [b.decode("utf-8", "surrogateescape").replace("\n", " ") for b in raw]
    out = classify_lines(lines, Context.build("auto"))
    assert len(out) == sum(1 for line in lines if line.strip())
    for line in out:
        json.loads(line)
        line.encode("utf-8")


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), garbage=TEXT)
def test_realistic_messages_with_garbage_spliced_in(seed, garbage):
    rng = random.Random(seed)
    base = "I'll run the tests.\n<tool_call>\n<function=bash>\n<parameter=command>\npytest -x\n</parameter>"
    at = rng.randrange(len(base) + 1)
    content = base[:at] + garbage + base[at:]
    args = json.dumps({"command": "ls " + garbage}, ensure_ascii=rng.random() < 0.5)
    msg = message(content, reasoning=garbage * 3, calls=[call("bash", args[: rng.randrange(len(args) + 1)])])
    _check_output(classify_message(msg, Context.build("qwen3_coder")), msg)


def test_ten_megabytes_of_garbage_arguments():
    rng = random.Random(0)
    alphabet = 'ab\ufffdĠ<>/="{}[]\\\n \ud800😀' + "".join(chr(c) for c in range(0x20, 0x7F))
    garbage = "".join(rng.choice(alphabet) for _ in range(1_000_000)) * 10
    msg = message(garbage[:1000], reasoning=garbage[:5000], calls=[call("bash", garbage), bash(garbage)])
    result = classify_message(msg, Context.build("auto"))
    assert "malformed_tool_call" in result["labels"]  # the raw garbage is not JSON
    _check_output(result, msg)


def test_deeply_nested_arguments():
    nested = "[" * 100_000 + "]" * 100_000
    result = classify_message(message("", calls=[call("bash", nested)]), Context.build("auto"))
    assert "malformed_tool_call" in result["labels"]
