"""Words run together (`Thereareseveralclassesavailablebydefault,including:Boolean`): a detokenizer that drops the
word markers of SentencePiece or the spaces of streamed pieces leaves prose whose words have no spaces between
them. Measured as the share of a field's characters that lie in runs of letters of one word-spacing script
(Latin, Greek, Cyrillic, Armenian, Vietnamese) at least RUN_LETTERS long. Prose in those scripts keeps its long
words rare (`internationalization`, a German compound now and then), run-together text is nearly all long runs.
Code (fences, inline code, indented lines), URLs and camel-case names are not read. The threshold is calibrated on
real clean text (`python -m eval.classify.calibrate --write`, degeneracy.json: `run_together`), not chosen.
"""

from __future__ import annotations

import re
from functools import cache

from eval.classify.compiled import speedups as _speedups
from eval.classify.degeneracy import calibrated

LONG_CHUNK = 24  # characters between spaces: longer than nearly every real word
MIN_DISTINCT = 8  # words hold many different letters; `XXXXXXXX` masks and `====` rules do not
MIN_CHARS = 80  # fewer non-space characters say nothing about the share
_LETTERS = re.compile("[a-zA-Z\u00c0-\u024f\u0370-\u052f\u0531-\u0587\u1e00-\u1eff]")
# Paths, names, markup and code (calls, attribute access `self.assertEqual`): not run-together words.
_NOT_A_WORD = re.compile(r"[/_\\=@<>{}\[\]|$%^&*~+()]|\.[a-z]")
_CODE = re.compile(
    r"^[ \t]*(```|~~~)[^\n]*\n.*?(?:^[ \t]*\1[^\n]*$|\Z)|`[^`\n]*`|\S*://\S*|^(?: {4}|\t)[^\n]*$", re.S | re.M
)
# The same pattern without the alternatives that cannot match a text (no backtick, no `~~~`, no `://`): the same
# matches, and `\S*://` is no longer tried at every position of every word. Keyed by (code marks, URL).
_CODE_WITHOUT = {
    (True, True): _CODE,
    (True, False): re.compile(
        r"^[ \t]*(```|~~~)[^\n]*\n.*?(?:^[ \t]*\1[^\n]*$|\Z)|`[^`\n]*`|^(?: {4}|\t)[^\n]*$", re.S | re.M
    ),
    (False, True): re.compile(r"\S*://\S*|^(?: {4}|\t)[^\n]*$", re.S | re.M),
    (False, False): re.compile(r"^(?: {4}|\t)[^\n]*$", re.S | re.M),
}


# Indented lines alone (no fence, inline code or URL possible): found from their newline, a literal the regex engine
# skips to in C, instead of `^` tried at every position; the first line is done by hand.
_INDENTED = re.compile(r"\n(?: {4}|\t)[^\n]*")


def code_to_newlines(text: str) -> str:
    """`_CODE.sub("\n", text)`: fences, inline code, URLs and indented lines become a line break."""
    return _code_replaced(text, "\n")


def _code_replaced(text: str, by: str) -> str:
    """`_CODE.sub(by, text)`, by the pattern without the alternatives that cannot match (the same matches), or where
    only indented lines can match, by a search for their newlines (the same lines after the first)."""
    marks, url = "`" in text or "~~~" in text, "://" in text
    if marks or url:
        return _CODE_WITHOUT[marks, url].sub(by, text)
    if text.startswith(("    ", "\t")):
        newline = text.find("\n")
        text = by + text[newline:] if newline >= 0 else by
    if "\n    " in text or "\n\t" in text:  # else _INDENTED has nothing to match
        text = _INDENTED.sub("\n" + by, text)
    return text


def blank_code(tail: str) -> str:
    """`_CODE.sub(lambda m: " " * len(m.group()), tail)` (code and URLs blanked to spaces, offsets kept), by the
    pattern without the alternatives that cannot match (_CODE_WITHOUT: the same matches; `\\S*://\\S*` tried at
    every position costs most), and where only indented lines can match, by a search for their newlines (_INDENTED:
    the same lines after the first, whose line is blanked here)."""
    marks, url = "`" in tail or "~~~" in tail, "://" in tail
    if marks or url:
        return _CODE_WITHOUT[marks, url].sub(_spaces, tail)
    if "\n    " in tail or "\n\t" in tail:
        tail = _INDENTED.sub(_newline_spaces, tail)
    if tail.startswith(("    ", "\t")):
        newline = tail.find("\n")
        end = newline if newline >= 0 else len(tail)
        tail = " " * end + tail[end:]
    return tail


def _spaces(m: re.Match[str]) -> str:
    return " " * len(m.group())


def _newline_spaces(m: re.Match[str]) -> str:
    return "\n" + " " * (len(m.group()) - 1)


_MAY_HOLD_CODE: dict[str, bool] = {}
_MAY_HOLD_CODE_KEPT = 8  # the fields of the turn being classified (content, reasoning, a few arguments)


def may_hold_code(text: str) -> bool:
    """Whether `text` holds a backtick, a URL, an indented line or opens indented: where it does not, blanking its
    code changes nothing. Several statistics ask it of the same field (a tail of a field shorter than the tail is the
    field itself), so the last few answers are kept (a str keeps its hash, and the look-up compares by identity
    first)."""
    found = _MAY_HOLD_CODE.get(text)
    if found is None:
        found = "`" in text or "://" in text or "\n    " in text or "\n\t" in text or text.startswith(("    ", "\t"))
        if len(_MAY_HOLD_CODE) >= _MAY_HOLD_CODE_KEPT:
            _MAY_HOLD_CODE.clear()
        _MAY_HOLD_CODE[text] = found
    return found


def strip_code(text: str) -> str:
    """`_CODE.sub(" ", text)`: fences, inline code, URLs and indented lines become a space."""
    return _code_replaced(text, " ")


def run_together_share(text: str) -> float | None:
    """Share of the non-space characters of `text` (code and URLs left out) in chunks of LONG_CHUNK or more
    characters between spaces that are four fifths letters of a word-spacing script; None if too short."""
    if may_hold_code(text):
        text = strip_code(text)
    if _speedups is not None:  # the count and the chunks in one pass of C
        total, chunks = _speedups.spaced_chunks(text, LONG_CHUNK)
        if total < MIN_CHARS:
            return None
    else:
        total = len(text) - text.count(" ") - text.count("\n") - text.count("\t") - text.count("\r")
        if total < MIN_CHARS:
            return None
        chunks = _chunks_of(text, total)
    long = 0
    for chunk in chunks:
        if (
            len(set(chunk)) >= MIN_DISTINCT
            and not _NOT_A_WORD.search(chunk)
            and 5 * len(_LETTERS.findall(chunk)) >= 4 * len(chunk)
        ):
            long += len(chunk)
    return long / total


def _chunks_of(text: str, non_space: int) -> list[str]:
    """`_long_chunks(text)`, given the count of its characters other than space, newline, tab and CR: where no other
    whitespace is (the characters `str.split()` drops are as many), its chunks are `str.split()`'s, one pass in C."""
    parts = text.split()
    if sum(map(len, parts)) != non_space:
        return _long_chunks(text)
    if max(map(len, parts), default=0) < LONG_CHUNK:  # most fields have none
        return []
    return [chunk for chunk in parts if len(chunk) >= LONG_CHUNK]


def _long_chunks(text: str) -> list[str]:
    """The chunks of LONG_CHUNK or more characters between spaces (` `, newline, tab, CR), in order: what
    `re.findall(r"[^ \\n\\t\\r]{24,}", text)` finds, by splits in C (the regex tries every position)."""
    parts = text.replace("\n", " ").replace("\t", " ").replace("\r", " ").split(" ")
    if max(map(len, parts)) < LONG_CHUNK:  # most fields have none
        return []
    return [chunk for chunk in parts if len(chunk) >= LONG_CHUNK]


@cache
def threshold() -> float:
    """The calibrated threshold (degeneracy.json, `run_together`); above it a field's words are run together."""
    return calibrated("run_together", 1.0)
