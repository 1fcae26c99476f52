"""Function-word salad: short text of common English words and fragments in an order no sentence has (`… and like
to been and sa p I less millions the three is ( other …`, `your the`, `the and`), what a model with misloaded weights
or a broken kernel emits when its logits are wrong but not collapsed onto one token. Each word is common, no word
repeats, and the text is too short for the 64-token statistics of eval/classify/degeneracy.py.

The statistic `implausible_pairs` reads the adjacent pairs of tokens on each line of a field (between whitespace,
with no punctuation between them; code, inline code and URLs left out) in the last READS characters. Each token is a
class: one of the most frequent English words (the function words of eval/classify/degeneracy.py and the commonest
words of the reference), or `W` (a word of eval/classify/lexicon.txt), `FRAG` (1-3 lowercase letters that are not a
word: `sa`, `em`), `UNK`, `CAP`, `UPPER`, `MIX`, `SYM` (no letter or digit: `/`, `(`), `NUM` or `X`. A pair scores
log((n + 1) / (e + 1)), n its count in a reference of real English and e the count its two classes would have if
they were independent: pairs that English writes often score above 0, pairs it never writes although both classes
are common score far below (`to been`, `your the`, `the and`). The statistic is the lowest sum of WINDOW consecutive
pair scores. A field has none (0.0) with fewer than MIN_PAIRS pairs, where less than MIN_ENGLISH of its tokens are
English words (another language, code, a log), or where the field has more than MAX_WORDS words (as many as the
64-token window of eval/classify/degeneracy.py's statistics): the pair scores of long agent notes come near those of
a short salad (a reference of documentation lacks much of conversational English: `can or should`, `regardless of
case`), so a long salad stays a known gap. The value below which a field is salad is calibrated on real clean text
(`python -m eval.classify.calibrate --alpha 0 --update implausible_pairs`, degeneracy.json), not chosen.

The reference counts (wordpairs.txt) are generated, not written: `python -m eval.classify.wordpairs --write-table`
counts the pairs of the English that the interpreter and its installed packages ship (`pydoc_data.topics`, the
docstrings and comments of the standard library and of site-packages, the English source messages of the gettext
catalogs under /usr/share/locale). Counts of word classes, not text: nothing of it can be read back as a sentence.
"""

from __future__ import annotations

import math
import re
from array import array
from collections import Counter
from collections.abc import Iterable, Iterator
from functools import cache
from itertools import accumulate, pairwise
from operator import sub
from pathlib import Path

from eval.classify.compiled import speedups as _speedups
from eval.classify.degeneracy import FUNCTION_WORDS, WINDOW_TOKENS
from eval.classify.glued import known, lexicon
from eval.classify.spacing import code_to_newlines, may_hold_code

CALIBRATION_PIECE = 600  # characters of the gettext catalogs' pieces it is calibrated on: short texts, as it reads
MAX_WORDS = WINDOW_TOKENS  # words (between whitespace) of a field it reads: as many as the statistics' window
READS = 256  # the last characters of a field: a short salad is all of it
WINDOW = 24  # consecutive pairs summed: about one line of salad
MIN_PAIRS = 8  # fewer pairs are a label or a heading, not a sentence
MIN_ENGLISH = 0.8  # share of the pairs' first tokens that are English words (not names, code or another language)
COMMON_WORDS = 200  # the commonest words of the reference are classes of their own, beside the function words
TABLE_PATH = Path(__file__).with_name("wordpairs.txt")
REFERENCE_LIMIT = 60_000_000  # characters of site-packages' docstrings and comments read by --write-table
_LEAD = "\"'([*\u201c\u2018\u00ab"
_TRAIL = ".,;:!?\"')]*\u201d\u2019\u00bb\u2026"
_NOT_ENGLISH = frozenset(("FRAG", "UNK", "CAP", "UPPER", "MIX", "X", "SYM", "NUM"))


class _Scores(dict[tuple[str, str], float]):
    """Pair scores: those of the pairs the reference holds, and for any other pair -log(e + 1), computed when first
    asked for and kept (its classes' counts are in the table; a class it lacks counts 0)."""

    def __init__(self, seen: dict[tuple[str, str], float], left: dict[str, float], right: dict[str, float]):
        super().__init__(seen)
        self.left = left
        self.right = right

    def __missing__(self, pair: tuple[str, str]) -> float:
        score = self[pair] = -math.log(self.left.get(pair[0], 0.0) * self.right.get(pair[1], 0.0) + 1)
        return score


@cache
def table() -> tuple[frozenset[str], _Scores, dict[str, float], dict[str, float]]:
    """(words that are classes of their own, pair scores, log(e + 1) parts: left and right class counts over the
    square root of the total); empty if wordpairs.txt is missing (then nothing is salad)."""
    try:
        lines = TABLE_PATH.read_text(encoding="utf-8").splitlines()
    except OSError:
        return frozenset(), _Scores({}, {}, {}), {}, {}
    left: dict[str, float] = {}
    right: dict[str, float] = {}
    seen: dict[tuple[str, str], int] = {}
    total = 1
    for line in lines:
        kind, *rest = line.split(" ")
        if kind == "N":
            total = int(rest[0])
        elif kind == "L":
            left[rest[0]] = float(rest[1])
        elif kind == "R":
            right[rest[0]] = float(rest[1])
        elif kind == "P":
            seen[(rest[0], rest[1])] = int(rest[2])
    root = math.sqrt(total)
    left = {k: v / root for k, v in left.items()}
    right = {k: v / root for k, v in right.items()}
    scores = {(a, b): math.log((n + 1) / (left[a] * right[b] + 1)) for (a, b), n in seen.items()}
    words = frozenset(k for k in left if k.islower() and k.isalpha()) | FUNCTION_WORDS
    return words, _Scores(scores, left, right), left, right


def _token_class(core: str, words: frozenset[str]) -> str:
    if core.isalpha() and core.isascii():
        lower = core.lower()
        if core == "I":
            return "i"
        if core.islower() or (core[0].isupper() and core[1:].islower()):
            if lower in words:
                return lower  # `The` opening a sentence is `the`
            if core.islower():
                if known(lower, lexicon()):
                    return "W"
                return "FRAG" if len(lower) <= 3 else "UNK"
            return "CAP"
        return "UPPER" if core.isupper() else "MIX"
    if not any(c.isalnum() for c in core):
        return "SYM"
    return "NUM" if core.isdigit() else "X"


# Per raw token (punctuation included): its class, whether it opens with a quote or bracket, whether it closes with
# punctuation. Tokens repeat across fields, so each is classified once (the cache is cleared when it grows too big).
# A line break is a token that neither follows nor is followed by another: pairs never cross a line.
_LINE_BREAK = ("", True, True)
_TOKENS: dict[str, tuple[str, bool, bool]] = {"\n": _LINE_BREAK}
_MAX_TOKENS = 200_000


def _token(token: str, words: frozenset[str]) -> tuple[str, bool, bool]:
    core = token.lstrip(_LEAD)
    word = core.rstrip(_TRAIL)
    if not word:  # a token of punctuation alone (`(`, `...`)
        return _token_class(core or token, words), len(core) < len(token), False
    return _token_class(word, words), len(core) < len(token), len(word) < len(core)


def _without_code(text: str) -> str:
    """`text` with its fences, inline code, URLs and indented lines each a line break (pairs never cross one), where
    it holds a backtick, a URL or an indented line (a `~~~` fence alone is read as prose)."""
    if may_hold_code(text):
        return code_to_newlines(text)
    return text


def pair_classes(text: str, words: frozenset[str]) -> list[tuple[str, str]]:
    """The classes of each two adjacent tokens of `text` on one line, no punctuation between them; fences, inline
    code, URLs and indented lines are not read (a line break stands in their place)."""
    text = _without_code(text)
    tokens = _TOKENS
    if len(tokens) > _MAX_TOKENS:
        tokens.clear()
        tokens["\n"] = _LINE_BREAK
    raw: list[str] = []
    for line in text.split("\n"):
        raw += line.split()
        raw.append("\n")
    get = tokens.get
    info = [get(t) or tokens.setdefault(t, _token(t, words)) for t in raw]
    return [(a[0], b[0]) for a, b in pairwise(info) if not a[2] and not b[1]]


class _Codes:
    """What the compiled helper reads: each class a number, each token a code (class * 4 + 2 * opens with a quote or
    bracket + closes with punctuation; the cache `codes`, cleared when it grows too big), the pair scores as a
    matrix of doubles (the same values as `table()`'s scores), and a byte per class that is 1 for a class that is no
    English word."""

    def __init__(self, words: frozenset[str], scores: _Scores):
        names = sorted(words | set(scores.left) | set(scores.right) | _NOT_ENGLISH | {"i", "W", ""})
        self.number = {name: k for k, name in enumerate(names)}
        self.n = len(names)
        self.matrix = array("d", (scores[(a, b)] for a in names for b in names)).tobytes()
        self.foreign = bytes(name in _NOT_ENGLISH for name in names)
        self.words = words
        self.codes: dict[str, int] = {}

    def code_of(self, token: str) -> int:
        kind, lead, trail = _token(token, self.words)
        code = self.codes[token] = self.number[kind] * 4 + 2 * lead + trail
        return code


@cache
def _codes() -> _Codes:
    words, scores, _, _ = table()
    return _Codes(words, scores)


def implausible_pairs(text: str) -> float:
    """The lowest sum of WINDOW consecutive pair scores in the last READS characters of `text` (0.0 where no pair
    is implausible, where there are fewer than MIN_PAIRS pairs, where the text is not English prose, or where the field
    has more than MAX_WORDS words)."""
    if _speedups is not None:  # the word count, the pairs and their sums in C: the same values (test_fast_paths)
        return _implausible_pairs_compiled(text)
    n_words = len(text.split(maxsplit=MAX_WORDS))
    if n_words > MAX_WORDS or n_words <= MIN_PAIRS:
        return 0.0  # a long field (most fields stop here, after splitting off MAX_WORDS + 1 words), or too few pairs
    words, scores, _, _ = table()
    if not scores:
        return 0.0
    pairs = pair_classes(text[-READS:], words)
    if len(pairs) < MIN_PAIRS:
        return 0.0
    if len(pairs) - sum([a in _NOT_ENGLISH for a, _ in pairs]) < MIN_ENGLISH * len(pairs):
        return 0.0
    values = list(map(scores.__getitem__, pairs))
    if len(values) <= WINDOW:
        best = sum(values)
    else:
        sums = list(accumulate(values, initial=0.0))
        best = min(map(sub, sums[WINDOW:], sums))
    return min(0.0, round(best, 6))


def _implausible_pairs_compiled(text: str) -> float:
    assert _speedups is not None
    if _speedups.words_over(text, MAX_WORDS):
        return 0.0  # a long field: most fields stop here
    scores = table()[1]
    if not scores:
        return 0.0
    tail = _without_code(text[-READS:])
    compiled = _codes()
    if len(compiled.codes) > _MAX_TOKENS:
        compiled.codes.clear()
    pairs, foreign, best = _speedups.pair_window(
        tail, compiled.codes, compiled.code_of, compiled.matrix, compiled.n, compiled.foreign, WINDOW
    )
    # A field of MIN_PAIRS words or fewer has fewer pairs: the Python path's test of the word count is this one.
    if pairs < MIN_PAIRS or pairs - foreign < MIN_ENGLISH * pairs:
        return 0.0
    return min(0.0, round(best, 6))


def reference_texts() -> Iterator[str]:
    """English the interpreter and its packages ship: `pydoc_data.topics`, the gettext catalogs' source messages,
    and the docstrings and comments of the standard library and site-packages (tests left out), lines unindented."""
    import gettext
    import sysconfig
    from pydoc_data.topics import topics

    yield "\n\n".join(topics[k] for k in sorted(topics))
    messages: set[str] = set()
    for path in sorted(Path("/usr/share/locale").rglob("*.mo")):
        try:
            with path.open("rb") as f:
                catalog = gettext.GNUTranslations(f)
        except (OSError, UnicodeDecodeError, ValueError, KeyError, IndexError):
            continue
        for key in catalog._catalog:  # type: ignore[attr-defined]
            message = key[0] if isinstance(key, tuple) else key
            if isinstance(message, str):
                messages.add(message)
    yield "\n".join(sorted(messages))
    paths = sysconfig.get_paths()
    yield from _source_prose(Path(paths["stdlib"]), exclude="site-packages", limit=REFERENCE_LIMIT)
    yield from _source_prose(Path(paths["purelib"]), exclude="", limit=REFERENCE_LIMIT)


_DOCSTRING = re.compile(r"(\"\"\"|''')(.*?)\1", re.S)
_COMMENT = re.compile(r"^[ \t]*#+ ?(.*)$", re.M)


def _source_prose(root: Path, exclude: str, limit: int) -> Iterator[str]:
    read = 0
    for path in sorted(root.rglob("*.py")):
        if {"test", "tests", exclude} & set(path.parts) or path.stat().st_size > 400_000:
            continue
        source = path.read_text(encoding="utf-8", errors="replace")
        prose = [m.group(2) for m in _DOCSTRING.finditer(source)] + ["\n".join(_COMMENT.findall(source))]
        text = "\n".join(line.strip() for line in "\n".join(prose).split("\n"))
        read += len(text)
        yield text
        if read > limit:
            return


def build_table(texts: Iterable[str]) -> list[str]:
    """The lines of wordpairs.txt: the total, each class's count as first and as second of a pair, each pair's."""
    texts = list(texts)
    counts = Counter(w for t in texts for w in re.findall(r"(?<![A-Za-z_])[a-z]+(?![A-Za-z_])", t))
    common = frozenset(w for w, _ in counts.most_common(COMMON_WORDS)) | FUNCTION_WORDS
    pairs: Counter[tuple[str, str]] = Counter()
    for text in texts:
        pairs.update(pair_classes(text, common))
    left: Counter[str] = Counter()
    right: Counter[str] = Counter()
    for (a, b), n in pairs.items():
        left[a] += n
        right[b] += n
    lines = [f"N {sum(pairs.values())}"]
    lines += [f"L {k} {n}" for k, n in sorted(left.items())] + [f"R {k} {n}" for k, n in sorted(right.items())]
    return lines + [f"P {a} {b} {n}" for (a, b), n in sorted(pairs.items())]


def main(argv: list[str] | None = None) -> int:
    from eval.classify.generated import write_generated

    return write_generated(
        argv, "eval.classify.wordpairs", "--write-table", TABLE_PATH, lambda: build_table(reference_texts()), "lines"
    )


if __name__ == "__main__":
    raise SystemExit(main())
