"""`degenerate_repetition`: loops beyond what legitimate output shows; realistic repetitive negatives."""

from __future__ import annotations

import inspect
import json
import textwrap

import pytest

from tests.unit.classify.helpers import bash, call, classify, labels, message

LOOPS = [
    # A phrase until max_tokens.
    message("Let me check the test again. " * 40, finish="length"),
    # One line, no max_tokens: the model emitted EOS after looping.
    message("I need to fix the `_get_deps` function.\n" * 30),
    # A token loop inside the reasoning, then a call.
    message("", reasoning="The value is " + "the the " * 200 + "wrong.", calls=[bash("ls")]),
    # A block of three lines, repeated.
    message("", reasoning="Step:\n- open file\n- edit file\n" * 25, finish="length"),
    # Characters of a byte-level leak looping.
    message("ĠĠĠĠĠĠĠĠ" * 100, finish="length"),
    # Inside a command.
    message("", calls=[bash("echo " + "foo && " * 200)]),
    # In the middle of long text (the model recovered).
    message(inspect.getsource(json)[:3000] + "\n" + "return None\n" * 40 + inspect.getsource(textwrap)[:3000]),
    # Short loop cut by max_tokens.
    message("The answer is: " + "0, 1, " * 30, finish="length"),
]


@pytest.mark.parametrize("msg", LOOPS)
def test_loops_are_found(msg):
    result = classify(msg)
    assert "degenerate_repetition" in result["labels"]
    ev = next(e for e in result["evidence"] if e["label"] == "degenerate_repetition")
    assert ev["end"] - ev["start"] >= 160 and " x " in ev["detail"]


PYTEST_LOG = "\n".join(
    ["============================= test session starts =============================="]
    + [f"tests/test_query.py::test_filter_{i} PASSED                                 [{i:3d}%]" for i in range(60)]
    + ["tests/test_models.py " + "." * 120 + " [100%]", "=" * 80, "============ 180 passed in 2.31s ============"]
)
TABLE = (
    "| Test | Status | Time |\n|------|--------|------|\n"
    + "".join(f"| test_case_{i:02d} | PASSED | 0.01s |\n" for i in range(40))
    + "| test_dup | PASSED | 0.01s |\n" * 6
)
SEPARATORS = "=" * 79 + "\nSUMMARY\n" + "-" * 79 + "\n" + "#" * 120 + "\n" + "." * 300 + "\n"
CHINESE = "修复了编码问题。测试全部通过。我已经提交了补丁。" + "哈哈哈哈哈哈哈哈哈哈哈哈"
FIXTURE = "DATA = [\n" + "".join(f"    ({i}, 'row {i}', {i * 0.5}),\n" for i in range(120)) + "]\n"
ZEROS = "WEIGHTS = [" + ", ".join(["0.0"] * 24) + "]\n"

CLEAN = [
    message("", calls=[bash(f"cat > tests/test_fix.py <<'EOF'\n{inspect.getsource(json.decoder)}\nEOF")]),
    message("", calls=[bash(f"cat > textwrap.py <<'EOF'\n{inspect.getsource(textwrap)}\nEOF")]),
    message(f"The test run:\n```\n{PYTEST_LOG}\n```\nAll tests pass.", calls=[call("submit", {})]),
    message(TABLE, calls=[bash("ls")]),
    message(SEPARATORS, calls=[bash("ls")]),
    message(CHINESE + " 😀😀😀😀😀😀", calls=[bash("ls")]),
    message("", calls=[bash(f"cat > tests/fixtures.py <<'EOF'\n{FIXTURE}{ZEROS}EOF")]),
    # A long, truncated but varied answer.
    message(inspect.getsource(textwrap)[:6000], finish="length"),
]


@pytest.mark.parametrize("msg", CLEAN)
def test_legitimate_repetitive_output_is_not_degenerate(msg):
    assert "degenerate_repetition" not in labels(msg)


def test_ten_megabyte_arguments_are_scanned_at_both_ends():
    big = "x = 1\n" + inspect.getsource(json.decoder) * 0 + "".join(f"v{i} = {i}\n" for i in range(800_000))
    assert len(big) > 9_000_000
    assert "degenerate_repetition" not in labels(message("", calls=[bash(big)]))
    looping = big + "again " * 500
    assert "degenerate_repetition" in labels(message("", calls=[bash(looping)]))
