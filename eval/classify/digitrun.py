"""A loop of one digit inside a reply (classifier 1.14.0): `The total is 12000000000000000000000000000000000…` (a
number whose last digit the model writes again and again), what a model whose logits collapsed onto a digit token
emits. eval/classify/repetition.py finds a loop of one character only over 512 characters or more (`=====` rules,
`.....` dots and indentation are legitimate and long), and a reply that is nothing but one digit repeated; a digit
run inside prose, shorter than that, went unseen.

The statistic `digit_run` is the longest run of one repeated digit in the integers (not a fraction's digits,
`0.3333333333333333`, nor a hexadecimal's or an identifier's, `0x0000000000000000`) of a field's prose lines: code
fences, inline code and URLs are blanked, and a line that holds a character of code (`=`, brackets, quotes, `+`,
`;`, `|`, a backslash) or is indented like a code block is not read (a literal in code, `'0' * 64`, is data). Real text
writes long runs of one digit in big numbers and in file names of logs (`000000010000000000000010`); the run beyond
which a field loops is calibrated on real clean text (`python -m eval.classify.calibrate --alpha 0 --update digit_run`,
degeneracy.json: the dev split's clean fields, the gettext catalogs' pieces and the Python standard library's and
site-packages' sources in pieces of 3,000 characters, the real text richest in long digit runs), not chosen.

A field is flagged where such a run *ends* its prose (closing punctuation and blanks may follow): a digit loop runs
until the reply stops, while a long number inside a sentence (`a googol is 1 followed by 100 zeros`, written out) is
a reply's legitimate content. `final_digit_run` looks at the field's last characters only; almost every field ends
in something else and leaves there.
"""

from __future__ import annotations

import re
from functools import cache

from eval.classify.compiled import speedups as _speedups
from eval.classify.degeneracy import calibrated
from eval.classify.glued import _blank_code

READS = 8192  # the last characters of a field, as the other statistics of free text read
DIGITS = "0123456789"
_NUMBER = re.compile(r"(?<![\w.])\d\d+")  # an integer, or a number's integer part (not `0x000…`, `.3333…`, `v000`)
_RUN = re.compile(r"(\d)\1+")
_CODE_LINE = re.compile(r"[=(){}\[\]<>'\"+;|\\]|^(?: {4}|\t)")
_TRAIL = " \t\r\n.,;:!?*_`)]}\"'\u2026"


def _has_run(text: str, length: int) -> bool:
    if _speedups is not None:
        return bool(_speedups.repeated_char(text, DIGITS, length))
    return any(d * length in text for d in DIGITS)


def _longest(number: str) -> int:
    return max((m.end() - m.start() for m in _RUN.finditer(number)), default=1)


def digit_run(text: str, limit: float = 0.0) -> int:
    """The longest run of one digit in the integers of the prose lines of `text` (the statistic), or 0 where no digit
    runs more than `limit` times in a row anywhere in `text` (then no line's run can be longer)."""
    need = max(2, int(limit) + 1)
    if not _has_run(text, need):
        return 0
    best = 0
    for line in _blank_code(text).splitlines():
        if len(line) < need or not _has_run(line, need) or _CODE_LINE.search(line):
            continue
        best = max([best, *(_longest(m.group()) for m in _NUMBER.finditer(line))])
    return best


def final_digit_run(text: str) -> tuple[int, int]:
    """(start, end) of the run of one digit that ends the prose of `text` (closing punctuation and blanks after it
    allowed) as the end of an integer on a prose line after a prose line (or none), or (0, 0): where a digit loop runs
    until the reply stops."""
    end = text.rstrip(_TRAIL)
    if not end or not end[-1].isdigit():
        return 0, 0  # almost every field: one look at its last characters
    body = end.rstrip(end[-1])
    start = number_start = len(body)
    while number_start > 0 and body[number_start - 1].isdigit():
        number_start -= 1
    before = body[number_start - 1] if number_start > 0 else ""
    if before.isalnum() or before in (".", "_"):  # (a tuple: "" at the field's start is in every string)
        return 0, 0  # a fraction (`0.3333…`), a hexadecimal or an identifier's digits (`0x0000…`, `v1000…`)
    line = _blank_code(text[body.rfind("\n") + 1 : len(end)])
    above = body[: body.rfind("\n") + 1].rstrip().rpartition("\n")[2]
    if not line[-1:].isdigit() or _CODE_LINE.search(line) or _CODE_LINE.search(above) or text.count("```") % 2:
        return 0, 0  # a literal in code (inline, on a line of code, in a fence left open) or what code printed
    return start, len(end)


@cache
def threshold() -> float:
    """The calibrated run (degeneracy.json) beyond which a field loops; a missing entry never fires."""
    return calibrated("digit_run", float("inf"))
