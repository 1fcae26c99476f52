"""Words split by stray spaces (classifier 1.12.0), the reverse of eval/classify/glued.py's glued words: a detokenizer
that puts a space before every token (`It  is  hard … fast - paced … Gener ative  Pre - trained  Trans former  ( G PT
) … summar ization .`), or a constrained decoder that spells a word one letter a token (`"a r m o r": "plat e"`).

Three statistics of a field's prose (fences, inline code, URLs and indented lines left out, the last READS
characters), each calibrated on real clean text (`python -m eval.classify.calibrate --update NAME`,
degeneracy.json), not chosen:
  - `spaced_gaps`: the share of the gaps between tokens on a line that are exactly two spaces or a space before
    `,` `.` `:` `;` (fields with at least MIN_GAPS gaps). Prose puts one space between words and none before these
    marks; a detokenizer that adds a space to pieces already spaced doubles every gap.
  - `split_pieces`: distinct pairs of adjacent pieces that join into a word of the wide lexicon while one of them is
    no word (`gener`+`ative`, `summar`+`ization`), each piece two letters or more, the joined word six or more; none
    in a field where more than MAX_UNKNOWN of the distinct words are no English word (`de noms` in French).
  - `spaced_letters`: runs of MIN_LETTERS or more single letters separated by single spaces, not all capitals, that
    join into a word of five letters or more of the wide lexicon (`a r m o r`, `s t r e n g t h`), maybe with one
    single letter beside it (`a s h i e l d`: the article). Capitals spaced for emphasis (`S T O P`, `W A R N`) and
    spelled acronyms are capitals, and a capital first letter is typographic letter-spacing of a heading (`D a t a s
    e t s` in a comment); variables (`a b c d e`, `p q r s t`) are consecutive letters of the alphabet (the
    lexicon, made from docstrings, has `abcde`); indented lines are read here (data such as a JSON object is
    indented).

WIDE_LEXICON (lexicon_wide.txt) is generated, not written: `python -m eval.classify.splitwords --write-lexicon` takes
the lowercase words of three letters or more that occur MIN_COUNT times or more in the English the interpreter and its
packages ship (eval/classify/wordpairs.py's reference: `pydoc_data.topics`, the gettext catalogs' source messages,
docstrings and comments of the standard library and site-packages). Words, not text.

Where the compiled helpers are built, the passes over a field's characters run in C (eval/classify/_speedups.c:
the gap counts, the distinct tokens and those that are no word, the pairs around them) and `spaced_letters` first
looks for MIN_SPELLED lowercase letters one space apart, without which it finds nothing: the same results
(tests/unit/classify/test_fast_paths.py; docs/trust/classifier.md, section "Speed").
"""

from __future__ import annotations

import re
from collections import Counter
from functools import cache, lru_cache
from itertools import pairwise
from pathlib import Path

from eval.classify.compiled import speedups as _speedups
from eval.classify.degeneracy import calibrated
from eval.classify.generated import read_words
from eval.classify.glued import known, lexicon
from eval.classify.spacing import blank_code as _blank_code
from eval.classify.spacing import may_hold_code

READS = 4096
MIN_GAPS = 24  # fewer gaps between tokens say nothing about a share
MIN_LETTERS = 4
MIN_SPELLED = 5  # letters of the word a run of single letters spells
MIN_JOINED = 6  # letters of the word two split pieces make
MIN_COUNT = 3
MAX_UNKNOWN = 0.25  # share of a field's distinct words that may be no English word (as eval/classify/glued.py)
WIDE_LEXICON = Path(__file__).with_name("lexicon_wide.txt")
STATISTICS = ("spaced_gaps", "split_pieces", "spaced_letters")

_GAP = re.compile(r"(?<=[^\W\d_])( +)(?=[^\W\d_])")  # between letters: not the columns of a table of numbers
_SPACED_MARK = re.compile(r"(?<=[^\W\d_]) [,.:;](?=\s|$)", re.M)
_PIECE = re.compile(r"(?<![\w'’-])([A-Za-z]?[a-z]+) {1,2}([a-z]+)(?![\w'’-])")
_TOKEN = re.compile(r"(?<![A-Za-z])[A-Za-z]?[a-z]+(?![A-Za-z])")
_FENCES = re.compile(r"^[ \t]*(```|~~~)[^\n]*\n.*?(?:^[ \t]*\1[^\n]*$|\Z)|`[^`\n]*`|\S*://\S*", re.S | re.M)
_LETTER_RUN = re.compile(r"(?<![\w'’.-])(?:[A-Za-z] ){3,}[A-Za-z](?![\w'’-])")


@cache
def wide_lexicon() -> frozenset[str]:
    """The words of lexicon_wide.txt; empty if it is missing (then nothing is split)."""
    return read_words(WIDE_LEXICON)


@lru_cache(maxsize=4)  # the three statistics read the same field one after another
def _prose(text: str) -> str:
    """The last READS characters with code and URLs blanked to spaces (offsets kept: `offset(text)` + an offset into
    it is an offset into `text`)."""
    tail = text[-READS:]
    if may_hold_code(tail):
        tail = _blank_code(tail)
    return tail


def spaced_gaps(text: str) -> float:
    """Share of the gaps between letters that are two spaces, with the spaces between a letter and `,` `.` `:` `;`
    (0.0 under MIN_GAPS, and at once where the text holds no doubled space and no spaced mark)."""
    prose = _prose(text)
    if _speedups is not None:  # the three counts in one pass of C (no doubled space and no spaced mark: 0.0)
        count, doubled, spaced = _speedups.gap_counts(prose)
        return 0.0 if count < MIN_GAPS else round((doubled + spaced) / count, 6)
    marks = prose.count(" ,") + prose.count(" .") + prose.count(" :") + prose.count(" ;")
    if not marks and "  " not in prose:
        return 0.0
    gaps = _GAP.findall(prose)
    if len(gaps) < MIN_GAPS:
        return 0.0
    doubled = sum(g == "  " for g in gaps)
    return round((doubled + len(_SPACED_MARK.findall(prose))) / len(gaps), 6)


def split_pieces(text: str) -> list[tuple[int, int, str]]:
    """(start, end, joined word) of each distinct pair of pieces (module docstring), offsets into the prose read."""
    words = wide_lexicon()
    if not words:
        return []
    prose = _prose(text)
    # Only a pair with a piece that is no word can count: the distinct tokens that are no word, found first (most
    # fields have few), and pairs read only around them.
    distinct, pieces = _unknown_tokens(prose, words)
    if not pieces or len(pieces) > MAX_UNKNOWN * distinct:
        return []  # no piece that is no word, or a field mostly of other words: another language, names
    out: list[tuple[int, int, str]] = []
    seen: set[str] = set()
    for start, end, left, right in _piece_pairs(prose, pieces):
        joined = left + right
        if len(left) < 2 or len(right) < 2 or len(joined) < MIN_JOINED or joined in seen:
            continue
        if known(joined, words) and not (_word(left, words) and _word(right, words)):
            seen.add(joined)
            out.append((start, end, joined))
    return out


def _piece_pairs(prose: str, pieces: set[str]) -> list[tuple[int, int, str, str]]:
    """(start, end, first piece lowercased, second piece) of each pair `_PIECE` finds in `prose` with a piece of
    `pieces`, in order; the second piece of a pair may open the next. In one pass of C where the compiled helpers
    are built."""
    if _speedups is not None:
        return _speedups.piece_pairs(prose, frozenset(pieces))
    out = []
    at = 0
    while (m := _PIECE.search(prose, at)) is not None:
        at = m.start(2)  # the second piece may open the next pair
        left, right = m.group(1).lower(), m.group(2)
        if left in pieces or right in pieces:
            out.append((m.start(), m.end(), left, right))
    return out


def _unknown_tokens(prose: str, words: frozenset[str]) -> tuple[int, set[str]]:
    """(the number of distinct lowercased tokens of `prose`, those of two letters or more that are no word). In one
    pass of C where the compiled helpers are built."""
    if _speedups is not None:
        distinct, unknown = _speedups.split_tokens(prose, words, lexicon())
        return distinct, set(unknown)
    tokens = {t.lower() for t in set(_TOKEN.findall(prose))}
    return len(tokens), {t for t in tokens - words if len(t) >= 2 and not _word(t, words)}


def _word(piece: str, words: frozenset[str]) -> bool:
    return known(piece, words) or known(piece, lexicon())


def spaced_letters(text: str) -> list[tuple[int, int, str]]:
    """(start, end, word) of each run of single letters that spells a word (module docstring)."""
    words = wide_lexicon()
    if not words or " " not in text:
        return []
    out = []
    tail = text[-READS:]
    # A run found spells a word of MIN_SPELLED letters or more in lowercase letters: MIN_SPELLED lowercase letters
    # one space apart, which the tail holds before its code is blanked (blanking makes runs of 2+ spaces, never the
    # single space between two letters). Most fields have none: one pass of C where the compiled helpers are built.
    if _speedups is not None and not _speedups.spelled_run(tail, MIN_SPELLED):
        return []
    if "`" in tail or "://" in tail or "~~~" in tail:
        tail = _FENCES.sub(lambda m: " " * len(m.group()), tail)  # indented lines are read: data is indented too
    for m in _LETTER_RUN.finditer(tail):
        letters = m.group().replace(" ", "")
        if not letters.islower() or _alphabetical(letters):
            continue
        low = letters
        for word in (low, low[1:], low[:-1]):
            if len(word) >= MIN_SPELLED and word in words:
                out.append((m.start(), m.end(), word))
                break
    return out


def _alphabetical(letters: str) -> bool:
    """Consecutive letters of the alphabet (`a b c d e`, `p q r s t`): variables or options, not a spelled word."""
    return all(ord(b) - ord(a) == 1 for a, b in pairwise(letters))


def offset(text: str) -> int:
    """Where the text read by the statistics starts in `text`: their offsets are offsets from there."""
    return max(0, len(text) - READS)


@cache
def thresholds() -> dict[str, float]:
    """The calibrated values (degeneracy.json) beyond which a field's words are split; missing entries never fire."""
    return {name: calibrated(name, float("inf")) for name in STATISTICS}


def build_wide_lexicon() -> list[str]:
    from eval.classify.wordpairs import reference_texts

    counts: Counter[str] = Counter()
    for text in reference_texts():
        counts.update(re.findall(r"(?<![A-Za-z_0-9])[a-z]{3,}(?![A-Za-z_0-9])", text))
    return sorted(w for w, n in counts.items() if n >= MIN_COUNT)


def main(argv: list[str] | None = None) -> int:
    from eval.classify.generated import write_generated

    return write_generated(
        argv, "eval.classify.splitwords", "--write-lexicon", WIDE_LEXICON, build_wide_lexicon, "words"
    )


if __name__ == "__main__":
    raise SystemExit(main())
