"""`replacement_char`: U+FFFD in content, reasoning or tool arguments; not when quoted from the context."""

from __future__ import annotations

import json

import pytest

from tests.unit.classify.helpers import bash, classify, labels, message

POSITIVES = [
    message("The bug is in `parse_d\ufffdte`: it drops the timezone.", calls=[bash("ls")]),
    message(
        "",
        reasoning="The test \ufffd\ufffd\ufffd fails because the queryset is evaluated twice.",
        calls=[bash("python -m pytest tests/queries -x -q")],
    ),
    message("", calls=[bash("sed -i 's/fo\ufffdo/bar/' django/utils/text.py")]),
    # The same, serialized with ensure_ascii=True by the server: only the JSON escape shows it.
    message(
        "",
        calls=[
            {
                "id": "c",
                "type": "function",
                "function": {"name": "bash", "arguments": json.dumps({"command": "grep -rn \ufffd src"})},
            }
        ],
    ),
]


@pytest.mark.parametrize("msg", POSITIVES)
def test_replacement_characters_are_found(msg):
    result = classify(msg)
    assert "replacement_char" in result["labels"]
    spans = [e for e in result["evidence"] if e["label"] == "replacement_char"]
    assert spans and all(e["end"] > e["start"] for e in spans)


def test_evidence_points_at_the_character():
    content = "Now the file reads caf\ufffd au lait."
    ev = classify(message(content, calls=[bash("cat menu.txt")]))["evidence"][0]
    assert (ev["field"], content[ev["start"] : ev["end"]]) == ("content", "\ufffd")


NEGATIVES = [
    message("测试通过了 ✅ 所有 42 个测试都已通过。🎉 Das Ergebnis ist größer als erwartet.", calls=[bash("ls")]),
    # Python source that handles U+FFFD, as JSON with an escaped backslash: `'\\ufffd'` is six characters.
    message("", calls=[bash("python - <<'EOF'\nprint('abc\\ufffd'.replace('\\ufffd', '?'))\nEOF")]),
    message("Invalid bytes are decoded to U+FFFD (the replacement character) by errors='replace'.", calls=[bash("ls")]),
]


@pytest.mark.parametrize("msg", NEGATIVES)
def test_clean_text_is_not_flagged(msg):
    assert "replacement_char" not in labels(msg)


def test_replacement_character_quoted_from_a_tool_result_is_not_corruption():
    file_text = "name,city\nJos\ufffd,S\ufffdo Paulo\n"
    msg = message(
        "The CSV already contains `Jos\ufffd,S\ufffdo Paulo`: the data file is broken, not our reader.",
        calls=[bash("file data/cities.csv")],
        prompt=[{"role": "user", "content": "Fix the reader."}, {"role": "tool", "content": file_text}],
    )
    assert "replacement_char" not in labels(msg)
