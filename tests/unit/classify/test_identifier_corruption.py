"""`identifier_corruption`: identifiers from the prompt or tool results coming back mutated."""

from __future__ import annotations

import pytest

from tests.unit.classify.helpers import bash, classify, labels, message

LS = "django/db/models/query.py\ndjango/db/models/sql/compiler.py\ntests/queries/test_qs_combinators.py\n"

POSITIVES = [
    # The seed example: a model name from the prompt.
    message("Serving kimi-kw now.", calls=[bash("vllm serve kimi-kw --port 8000")], prompt="Deploy kimi-k3 with vLLM."),
    # A path from a tool result, one letter changed.
    message("", calls=[bash("sed -n 1,80p django/db/modals/query.py")], prompt=[{"role": "tool", "content": LS}]),
    # An instance id with a digit turned into a letter.
    message("Working on django__django-1l099.", calls=[bash("ls")], prompt="Solve django__django-11099."),
    # A letter turned into a digit.
    message(
        "",
        calls=[bash("python -m pytest tests/queries/test_qs_c0mbinators.py")],
        prompt=[{"role": "tool", "content": LS}],
    ),
]


@pytest.mark.parametrize("msg", POSITIVES)
def test_mutated_identifiers_are_found(msg):
    result = classify(msg)
    assert "identifier_corruption" in result["labels"]
    ev = next(e for e in result["evidence"] if e["label"] == "identifier_corruption")
    assert "in context, written" in ev["detail"]


def test_evidence_names_original_and_copy():
    result = classify(POSITIVES[0])
    ev = [e for e in result["evidence"] if e["label"] == "identifier_corruption"]
    assert {e["field"] for e in ev} == {"content", "tool_calls[0].arguments"}
    assert all(e["text"] == "kimi-kw" and "'kimi-k3'" in e["detail"] for e in ev)


NEGATIVES = [
    # Enumerations: digit to digit.
    message(
        "", calls=[bash("touch tests/test_case_2.py")], prompt=[{"role": "tool", "content": "tests/test_case_1.py"}]
    ),
    # A new name, not one substitution away.
    message("", calls=[bash("vim django/db/models/lookups.py")], prompt=[{"role": "tool", "content": LS}]),
    # Case and separator changes are deliberate.
    message("Use Kimi-K3 or kimi_k3.", calls=[bash("ls")], prompt="Deploy kimi-k3."),
    # Both forms appear in the context: nothing is decidable.
    message("Compare kimi-kw to kimi-k3.", calls=[bash("ls")], prompt="Models: kimi-k3 and kimi-kw."),
    # Letter change in a short word (not a path): a legitimate new name.
    message("", calls=[bash("python -c 'import test_bar'")], prompt="test_baz is the module."),
    # No context: nothing is decidable.
    message("Serving kimi-kw now.", calls=[bash("ls")]),
    message("中文 kimi-k3 😀 测试", calls=[bash("ls")], prompt="Deploy kimi-k3."),
]


@pytest.mark.parametrize("msg", NEGATIVES)
def test_legitimate_identifiers_are_not_flagged(msg):
    assert "identifier_corruption" not in labels(msg)


DELIBERATE = [
    ("bounds = compute()", "bound1 = bounds[0]"),  # enumeration
    ("item1 = first()", "for items in groups:"),  # plural
    ("Django 4.2.1 is installed", "works on Django 4.2.x"),  # version wildcard
    ("Modules/_io/_iomodule.h", "cc -c Modules/_io/_iomodule.c -o Modules/_io/_iomodule.o"),  # extension
    ("tests/test_views_a.py", "touch tests/test_views_b.py"),  # a new file beside an old one
]


@pytest.mark.parametrize(("given", "written"), DELIBERATE)
def test_deliberate_new_names_are_not_corruption(given, written):
    msg = message("", calls=[bash(written)], prompt=[{"role": "tool", "content": given}])
    assert "identifier_corruption" not in labels(msg)
