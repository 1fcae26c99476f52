"""The exclusion list file: a version header, one reason per instance, refused when malformed."""

from __future__ import annotations

import pytest

from eval.tasks.exclusions import ExclusionError, parse, render


def test_round_trip() -> None:
    text = render("2026-12-02", {"b__b-2": "flaky:\n  differs", "a__a-1": "gold patch fails"})
    assert text.splitlines()[0] == "# specqual-exclusions v1 version=2026-12-02"
    parsed = parse(text)
    assert parsed.version == "2026-12-02"
    assert parsed.reasons == {"a__a-1": "gold patch fails", "b__b-2": "flaky: differs"}
    assert "a__a-1" in parsed and "c__c-3" not in parsed
    assert parsed.sha256 != parse(render("2026-12-03", parsed.reasons)).sha256


def test_comments_and_blank_lines_are_ignored() -> None:
    parsed = parse("# specqual-exclusions v1 version=x\n\n# why: see issue\nid-1 reason here\n")
    assert parsed.reasons == {"id-1": "reason here"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("id-1 reason\n", "first line"),
        ("# specqual-exclusions v1\nid-1 reason\n", "first line"),
        ("# specqual-exclusions v1 version=x\nid-1\n", "no reason"),
        ("# specqual-exclusions v1 version=x\nid-1 a\nid-1 b\n", "twice"),
    ],
)
def test_malformed_lists_are_refused(text: str, message: str) -> None:
    with pytest.raises(ExclusionError, match=message) as err:
        parse(text, "excl.txt")
    assert str(err.value).startswith("excl.txt: line")
