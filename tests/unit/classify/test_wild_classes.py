"""Classes of corruption seen in public bug reports that classifier 1.2.0 let through, in shapes written for this
test (the reports' own text stays outside the repository): replies of nothing but one punctuation mark (NaN
logits decode to token 0, `!`), UTF-8 read as Windows-1252, byte-level markers inside a code fence whose newlines
are markers too, lone newline markers, and words run together (a detokenizer that dropped the word markers).
Beside each, real text that holds the same characters and must stay clean.
"""

from __future__ import annotations

import pytest

from eval.classify.context import Context
from eval.classify.messages import classify_message
from tests.unit.classify.helpers import message


def labels(msg: dict) -> list[str]:
    return classify_message(msg, Context.build("auto", None, tools_known=False))["labels"]


FOUND = [
    (message("!" * 12), "degenerate_repetition"),
    (message("\uff01" * 10), "degenerate_repetition"),
    (message("? ? ? ? ? ? ? ? ? ?"), "degenerate_repetition"),
    (message("The model answered: " + "!" * 40, finish="length"), "degenerate_repetition"),
    (message("", reasoning="\u3002" * 30), "degenerate_repetition"),
    (message("It\u00e2\u20ac\u2122s done \u00e2\u20ac\u201d the tests pass."), "byte_piece"),
    (message("Temperature: 21\u00c2\u00b0C, sunny."), "byte_piece"),
    (message("Here:\u010a\u010a```python\u010adef\u0120f():\u010a\u0120\u0120return\u01201\u010a```"), "byte_piece"),
    (message("```yaml\u010akey:\u0120value\u010a```"), "byte_piece"),
    (message("First line \u010a\u010a second line"), "byte_piece"),
    # At the max_tokens cut: a paragraph three times over, blank tokens on one line.
    (
        message(
            "Intro.\n"
            + "I looked at the parser again because the header handling seemed wrong to me, and I want to be sure "
            "that the fix covers every record type before I run the whole test suite one more time.\n"
            * 3
            + "I looked at the parser",
            finish="length",
        ),
        "degenerate_repetition",
    ),
    (message("The function returns" + " " * 40, finish="length"), "degenerate_repetition"),
    # Words run together (a detokenizer dropped the word markers), in English and in Vietnamese.
    (
        message(
            "Therearethreewaystofixthis:restarttheserver,clearthecache,orupgradethelibrarytothelatestversion."
            "Eachoptionhasitsowntradeoffsandyoushouldchoosetheonethatfitsyoursetup."
        ),
        "byte_piece",
    ),
    (
        message(
            "Kh\u00f4ngsao\u0111\u00e2u,anhc\u00f3th\u1ec3h\u1ecfiemv\u1ec1b\u1ea5tc\u1ee9\u0111i\u1ec1ug\u00ecanhmu\u1ed1nbi\u1ebft."
            "Emlu\u00f4n\u1edf\u0111\u00e2ys\u1eb5ns\u00e0ngtr\u1ea3l\u1eddim\u1ecdic\u00e2uh\u1ecfic\u1ee7aanh."
        ),
        "byte_piece",
    ),
]


@pytest.mark.parametrize(("msg", "label"), FOUND)
def test_wild_classes_are_found(msg, label):
    assert label in labels(msg)


CLEAN = [
    message("Wow!!! That worked."),
    message("Really?!?! I did not expect that."),
    message("... and that is all."),
    message("\U0001f44d" * 10),
    message("----------------\n================"),
    message("Caf\u00e9 cr\u00e8me, na\u00efve r\u00e9sum\u00e9, Z\u00fcrich, \u00c5ngstr\u00f6m."),
    message("Il a dit \u00ab oui \u00bb \u00e0 25 \u00b0C, \u00a3 5 \u00a9 2024."),
    message("Za\u017c\u00f3\u0142\u0107 g\u0119\u015bl\u0105 ja\u017a\u0144."),
    message("\u0160\u010dasn\u00e9 \u017e\u00fdt\u00ed, \u0141\u00f3d\u017a, \u00c7\u0131k\u0131\u015f."),
    message("The mojibake `\u00e2\u20ac\u2122` is what `\u2019` looks like when UTF-8 is read as Windows-1252."),
    message("Tokens:\n\n```\n['Se', '\u00c3\u00a1n', '\u0120Murray', '\u010a', '\u0120got']\n```\n"),
    # Code and explanations that name one piece in quotes (tokenizer and mojibake-repair code, a how-to).
    message('```python\ntext = text.replace("\u0120", " ").replace("\u010a", "\\n")\n```'),
    message("```python\nif token.startswith('\u0120'):\n    word = token[1:]\nsp = piece.replace('\u2581', ' ')\n```"),
    message('`s.encode("latin-1").decode("utf-8")` turns "\u00c3\u00a9" back into "\u00e9".'),
    message("The decoder maps \u0120 back to a space and \u010a back to a newline."),
    message(
        "Die Donaudampfschifffahrtsgesellschaft wurde 1829 in Wien gegr\u00fcndet und betrieb lange Zeit die "
        "gr\u00f6\u00dfte Flotte auf der Donau, mit vielen Schiffen f\u00fcr Passagiere und Fracht."
    ),
    message("See https://example.com/a/very/long/path/without/any/spaces and AbstractSingletonProxyFactoryBean."),
    message("| sign | exponent |\n| X | XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX |\nThe diagram shows the layout of the bits."),
    message("```\n\u2581A \u2581Republican \u2581strate gy \u2581to \u2581counter\n```\nThose are the pieces."),
    message("```python\ndef f():\n    if x:\n                ", finish="length"),
    message("1. Open the settings file\n2. Change the port to 8080\n3. Restart the server\n4. Run the tests\n"),
    message("".join(f"- test_case_{i} PASSED\n" for i in range(1, 12))),
]


@pytest.mark.parametrize("msg", CLEAN)
def test_real_text_with_the_same_characters_is_clean(msg):
    assert [label for label in labels(msg) if label != "truncated"] == []
