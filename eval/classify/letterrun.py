"""A loop of one letter that ends a reply (classifier 1.15.0): `lymente arrestato ilmaistaيييييييييي…` (a few words,
then one letter written again and again until the reply stops), what a model whose logits collapsed onto a letter
token emits. eval/classify/repetition.py finds a loop of one character only over 512 characters or more (`=====`
rules, `.....` dots and indentation are legitimate and long) and a field that is one letter repeated only from 64
letters on; eval/classify/digitrun.py finds the same loop of a digit. A shorter run of one letter at the end of a
reply went unseen.

The statistic `letter_run` is the length of the run of one letter (any script: `str.isalpha`) that ends a field
(blanks may follow it), where the run does not lengthen a word of its own script: `Nooooo`, `Zzzzzz`, `hmmmm` and
`ahhhh` write a word's letter again on purpose, and are 0; a run after a blank, a digit, punctuation or a letter of
another script (`ilmaista` then Arabic yeh) counts. Laughter written as one letter again and again is 0 wherever it
stands (`哈哈哈哈`, `wwwww` after Japanese, `ㅋㅋㅋㅋ` after `!`): the one-letter interjections of
eval/classify/degeneracy.py and the Korean jamo of laughter.

The run beyond which a field loops is calibrated on real clean text (`python -m eval.classify.calibrate --alpha 0
--update letter_run`, degeneracy.json: the dev split's clean fields, the gettext catalogs' pieces and the Python
sources' pieces of 3,000 characters, whose cuts fall inside test data such as `'y' * 77` written out), not chosen.
`final_letter_run` looks at the field's last two characters first; almost every field ends in something else, or in
two different characters, and leaves there.
"""

from __future__ import annotations

import unicodedata
from functools import cache

from eval.classify.degeneracy import INTERJECTIONS, calibrated

READS = 1024  # the last characters of a field read (a longer run is as long as this, beyond any threshold)
LAUGHTER = frozenset({i for i in INTERJECTIONS if len(i) == 1} | {"\u314b", "\u314e"})  # and Korean `ㅋ`, `ㅎ`


def _script(ch: str) -> str:
    """The first word of the character's Unicode name (`LATIN`, `ARABIC`, `CYRILLIC`, `CJK`): its script, enough to
    tell a word lengthened in its own script from a run glued to a word of another."""
    return unicodedata.name(ch, "").partition(" ")[0]


def final_letter_run(text: str) -> tuple[int, int]:
    """(start, end) in `text` of the run of one letter (two or more) that ends `text` (blanks after it allowed) and
    does not lengthen a word of its own script, or (0, 0)."""
    end = text[-2:]
    if end[-1:].isspace():
        end = text[-64:].rstrip()[-2:] or text[-READS:].rstrip()[-2:]  # blanks after the run: a short slice first
    if len(end) < 2 or end[0] != end[1] or not end[0].isalpha():
        return 0, 0  # almost every field: one look at its last two characters
    tail = text[-READS:].rstrip()
    letter = tail[-1]
    if letter.lower() in LAUGHTER:
        return 0, 0
    body = tail.rstrip(letter)
    before = body[-1:]
    if before.isalpha() and _script(before) == _script(letter):
        return 0, 0  # a word lengthened on purpose: `Nooooo`, `hmmmm`, `Zzzzz`
    offset = len(text) - len(text[-READS:])
    return offset + len(body), offset + len(tail)


def letter_run(text: str) -> int:
    """The length of `final_letter_run` (the statistic; 0 where the field ends otherwise)."""
    start, end = final_letter_run(text)
    return end - start


@cache
def threshold() -> float:
    """The calibrated run (degeneracy.json) beyond which a field loops; a missing entry never fires."""
    return calibrated("letter_run", float("inf"))
