"""Statistical degeneracy of free text (issue 30): loops and token salad found by statistics of the text, not by
shapes picked from examples, on content and on reasoning separately.

A looping or degenerate model leaves statistical traces that healthy prose does not, whatever the unit, the
language or whether the repeats are exact:

- `compression`: zlib's compressed size over the raw size of the last 1,024 characters of prose (a loop compresses to a
  fraction of what prose does, also when its repeats vary a little);
- `distinct3`: distinct token trigrams over all trigrams of the last 64 tokens (`distinct-n`);
- `periodicity`: the most repetitions of a unit of 1-8 tokens, back to back, among the last 64 tokens
  (` is is is is`, `the, the, the`);
- `function_run`: the longest run of tokens of one class, function words (`of the and to in a is of…`: token
  salad made of the words every language uses most; the entropy of the token classes over that run is zero);
- `stutter`: how many different words of the last 64 tokens follow themselves (`parsing parsing and and
  environment environment`: every word doubled, which no repeated unit of three finds).

They are measured on the *prose* of a field: fenced code blocks, table rows, indented lines, list items of one
or two words and lines that are not two thirds words (code, logs, file lists, data) are left out (they repeat
legitimately and have `degenerate_repetition`'s long-loop rules of their own). The thresholds are not chosen by
hand: they are quantiles of these statistics over real clean text at a stated false-positive rate, written by
`python -m eval.classify.calibrate --write` into `degeneracy.json` beside this module, together with how they
were obtained (docs/trust/classifier.md, section "Calibration").
"""

from __future__ import annotations

import json
import math
import re
import zlib
from dataclasses import dataclass
from functools import cache
from itertools import chain, repeat
from operator import eq
from pathlib import Path
from typing import Any

from eval.classify.charsets import may_hold
from eval.classify.compiled import speedups as _speedups

CALIBRATION = Path(__file__).with_name("degeneracy.json")
TAIL_CHARS = 1024  # a loop runs to the end: the statistics read the end of the prose
COMPRESSION_CHARS = 1024
COMPRESSION_MIN_BYTES = 384  # below that zlib's own overhead dominates the ratio
WINDOW_TOKENS = 64
MIN_LINE_WORDS = 3  # a line of prose is a sentence or a piece of one
TOKEN_CHARS = 512  # enough characters for WINDOW_TOKENS tokens of prose (8 characters a token)
MIN_TOKENS = 12  # fewer tokens say nothing about distinct trigrams
MAX_UNIT_TOKENS = 8
STATISTICS = ("compression", "distinct3", "periodicity", "function_run", "stutter")
LOW_IS_DEGENERATE = frozenset({"compression", "distinct3"})

# Tokens: one CJK/kana/hangul character, a run of letters and digits, or a run of other non-space characters
# (`=====` and `.)` are one token each).
_TOKEN_NO_CJK = re.compile(r"\w+|[^\w\s]+")  # the same where no CJK character is (faster)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_CJK_RANGE = (0x3040, 0xD7AF)  # the code points _CJK spans (eval.classify.charsets prefilter)
_TOKEN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]|[^\W_]+|[^\w\s]+")
# A chunk of prose between spaces: letters (words joined by hyphens, apostrophes or CJK punctuation), maybe
# with punctuation around; not a path, a call, a number or a log field.
_WORD = re.compile(
    r"(?<!\S)[-\"'(\[*_«“‘「]*[^\W\d_]+(?:[-'’。、，！？：；][^\W\d_]+)*[.,;:!?\"')\]*_»”’…。、，！？：；」]*(?!\S)"
)
_FENCE = re.compile(r"^[ \t]*(```|~~~)[^\n]*\n.*?(?:^[ \t]*\1[^\n]*$|\Z)", re.S | re.M)
# The words English text uses most (closed classes: articles, prepositions, pronouns, auxiliaries, conjunctions).
FUNCTION_WORDS = frozenset(
    " ".join(
        (
            "a an the of to in on at by for with from as into onto upon about over under and or but nor so yet if",
            "then than that this these those there here it its is are was were be been being am do does did have",
            "has had i you he she we they me him her us them my your his our their not no all any some each every",
            "both either neither which who whom whose what when where why how can could will would shall should",
            "may might must just also very too more most less such only own same other another one",
        )
    ).split()
)
# Laughter and interjections repeat legitimately (`ha ha ha`, `哈哈哈`): they do not count as tokens at all.
INTERJECTIONS = frozenset(
    [
        "ha",
        "he",
        "hi",
        "ho",
        "hah",
        "heh",
        "hehe",
        "haha",
        "hahaha",
        "lol",
        "la",
        "na",
        "ja",
        "jaja",
        "xd",
        "哈",
        "呵",
        "嘿",
        "嘻",
        "w",
        "ｗ",
    ]
)
_RUN_SEPARATORS = frozenset(",")  # `the, the, of, …`: commas do not break a run of function words
_TOKEN_CLASS = {**dict.fromkeys(FUNCTION_WORDS, "f"), **dict.fromkeys(_RUN_SEPARATORS, "")}
# Periodicity is searched on the token sequence written as bytes, one byte per distinct token (a window holds
# at most WINDOW_TOKENS < 256 tokens): the shortest unit of 1-8 tokens at a position repeated at least MIN_REPS
# times in all, in C. Fewer are not measured (periodicity 1.0), in calibration and classification alike.
MIN_REPS = 3
_PERIODIC = re.compile(rb"(.{1,%d}?)\1{%d,}" % (MAX_UNIT_TOKENS, MIN_REPS - 1), re.S)
# A line without any of these is prose as it stands; one with them is checked chunk by chunk.
_CODE_HINT = re.compile(r"[\d/\\_=(){}\[\]<>@#$%&|~^]|[-*+.:]{3}")
# The same test as two searches, the first an ASCII charset where the line is ASCII (`\d` is [0-9] there): a
# charset alone is scanned in a tight loop in C, the alternation is tried at every position.
_HINT_CHAR = re.compile(r"[\d/\\_=(){}\[\]<>@#$%&|~^]")
_HINT_CHAR_ASCII = re.compile(r"[0-9/\\_=(){}\[\]<>@#$%&|~^]")
_HINT_RUN = re.compile(r"[-*+.:]{3}")


def _code_hint(line: str) -> bool:
    """`_CODE_HINT.search(line) is not None`, faster."""
    ascii = line.isascii()
    if ascii and _speedups is not None:  # the two searches in one pass of C
        hint: bool = _speedups.ascii_code_hint(line)
        return hint
    char = _HINT_CHAR_ASCII if ascii else _HINT_CHAR
    return char.search(line) is not None or _HINT_RUN.search(line) is not None


@dataclass(frozen=True)
class Statistics:
    """The statistics of one field's prose; None where the prose is too short for it to mean anything."""

    compression: float | None
    distinct3: float | None
    periodicity: float
    function_run: int
    stutter: float | None = None

    def get(self, name: str) -> float | None:
        value: float | int | None = getattr(self, name)
        return None if value is None else float(value)


def prose(text: str, limit: int = TAIL_CHARS) -> str:
    """The last `limit` characters of a field's prose: code fences, table rows, indented lines, lines of fewer
    than three words (list items, headings) and lines that are not two thirds words (code, logs, file lists,
    data) dropped."""
    keep: list[str] = []
    size = 0
    for line in reversed(_unfenced(text).split("\n")):  # from the end, until enough prose (a field is never split)
        if size >= limit:
            break
        if (stripped := _prose_line(line)) is not None:
            keep.append(stripped)
            size += len(stripped) + 1
    return "\n".join(reversed(keep))[-limit:]


def _unfenced(text: str) -> str:
    """`text` without its fenced code blocks (only where a fence marker is), inline code's backticks removed (its
    names are words of the sentence)."""
    if "`" in text:
        if "```" in text or "~~~" in text:
            text = _FENCE.sub("\n", text)
        text = text.replace("`", "")
    return text


_INDENTS = ("    ", "\t")


def _prose_line(line: str) -> str | None:
    """The line stripped if it is prose, else None (see `prose`)."""
    stripped = line.strip()
    if not stripped or line.startswith(_INDENTS) or stripped.count("|") >= 2:
        return None
    chunks = stripped.count(" ") + 1  # about the number of chunks between spaces
    if chunks < MIN_LINE_WORDS and not (
        len(stripped) >= 2 * MIN_LINE_WORDS and not stripped.isascii() and _CJK.search(stripped)
    ):
        return None  # list items, headings, one-word lines: names and labels, not sentences (CJK has no spaces)
    if not _code_hint(stripped) or mostly_words(stripped, stripped.split()):
        return stripped
    return None


# What `_WORD` allows before and after the letters of a chunk (no letter among them).
_WORD_BEFORE = "-\"'([*_«“‘「"
_WORD_AFTER = ".,;:!?\"')]*_»”’…。、，！？：；」"


def mostly_words(text: str, chunks: list[str]) -> bool:
    r"""`3 * len(_WORD.findall(text)) > 2 * len(chunks)`, where `chunks` is `text.split()`. `_WORD` matches whole
    chunks (none of its characters is a space), and every chunk that is letters (`str.isalpha`, a subset of
    `[^\W\d_]`) with `_WORD`'s opening and closing marks around is one of its matches: where those alone are more
    than two thirds (most prose lines with a code hint), the regex, tried at every position, is not run."""
    plain = sum([chunk.lstrip(_WORD_BEFORE).rstrip(_WORD_AFTER).isalpha() for chunk in chunks])
    return 3 * plain > 2 * len(chunks) or 3 * len(_WORD.findall(text)) > 2 * len(chunks)


def statistics(text: str, compression: bool = True) -> Statistics:
    """The four statistics of `text`'s prose (its last TAIL_CHARS characters). `compression=False` leaves the
    compression ratio out (None): it only corroborates, so the classifier measures it only for the evidence."""
    tail = prose(text[-4 * TAIL_CHARS :], TAIL_CHARS if compression else TOKEN_CHARS)
    raw = tail[-COMPRESSION_CHARS:].encode("utf-8", "surrogatepass") if compression else b""
    ratio = len(zlib.compress(raw, 9)) / len(raw) if compression and len(raw) >= COMPRESSION_MIN_BYTES else None
    tokens = _window_tokens(tail)
    stutter = _stutter(tail[-TOKEN_CHARS:], len(tokens))
    n_trigrams = len(tokens) - 2
    distinct = len(set(zip(tokens, tokens[1:], tokens[2:], strict=False)))
    distinct3 = distinct / n_trigrams if len(tokens) >= MIN_TOKENS else None
    # A unit of p >= 2 tokens repeated MIN_REPS times repeats a trigram; a unit of one token follows itself.
    periodic = distinct < n_trigrams or any(map(eq, tokens, tokens[1:]))
    return Statistics(ratio, distinct3, _periodicity(tokens) if periodic else 1.0, _function_run(tokens), stutter)


def _window_tokens(tail: str) -> list[str]:
    """The last WINDOW_TOKENS tokens of the prose `tail` (lowercased, interjections left out)."""
    window = tail[-TOKEN_CHARS:].lower()
    cjk = not window.isascii() and _CJK.search(window) is not None  # CJK is never ASCII
    tokens = (_TOKEN if cjk else _TOKEN_NO_CJK).findall(window)
    if not INTERJECTIONS.isdisjoint(tokens):
        tokens = [t for t in tokens if t not in INTERJECTIONS]
    return tokens[-WINDOW_TOKENS:]


def _last_tokens(text: str) -> list[str] | None:
    """`_window_tokens(prose(text[-4 * TAIL_CHARS:], TOKEN_CHARS))`, reading the prose lines from the end only until
    WINDOW_TOKENS tokens are found (most fields hold them in far fewer than TOKEN_CHARS characters); None where that
    shortcut is not exact: CJK in the text (the tokenizer then depends on the whole window) or a line that the
    window cuts. Tokens never cross a line, and lowercasing does not look across one, so the tokens of the lines
    read are the last tokens of the window."""
    tail = text[-4 * TAIL_CHARS :]
    if not tail.isascii() and may_hold(tail, *_CJK_RANGE) and _CJK.search(tail) is not None:
        return None
    if _speedups is not None:  # the loop below in C, ASCII lines judged there (tests/unit/classify/test_fast_paths.py)
        tokens: list[str] | None = _speedups.last_tokens(
            _unfenced(tail), _line_tokens, INTERJECTIONS, TOKEN_CHARS, WINDOW_TOKENS
        )
        return tokens
    return _last_tokens_python(tail)


def _last_tokens_python(tail: str) -> list[str] | None:
    """`_last_tokens` of the last 4 * TAIL_CHARS characters of a text without CJK, in Python."""
    parts: list[list[str]] = []
    found = size = 0
    findall = _TOKEN_NO_CJK.findall
    for line in reversed(_unfenced(tail).split("\n")):
        if size >= TOKEN_CHARS or found >= WINDOW_TOKENS:
            break
        # Empty and indented lines (about a third of those read) are never prose: left without a call.
        if not line or line.startswith(_INDENTS) or (stripped := _prose_line(line)) is None:
            continue
        size += len(stripped) + 1
        if size - 1 > TOKEN_CHARS:
            return None  # the window starts inside this line
        tokens = findall(stripped.lower())
        if not INTERJECTIONS.isdisjoint(tokens):
            tokens = [t for t in tokens if t not in INTERJECTIONS]
        parts.append(tokens)
        found += len(tokens)
    if len(parts) == 1:
        return parts[0][-WINDOW_TOKENS:]
    return list(chain.from_iterable(reversed(parts)))[-WINDOW_TOKENS:]


def _line_tokens(line: str) -> tuple[int, list[str]] | None:
    """Of one line: None where it is not prose, else the length of the stripped line and its tokens (lowercased,
    interjections left out), as `_last_tokens_python` reads them (the compiled loop asks this of non-ASCII lines)."""
    if (stripped := _prose_line(line)) is None:
        return None
    tokens = _TOKEN_NO_CJK.findall(stripped.lower())
    if not INTERJECTIONS.isdisjoint(tokens):
        tokens = [t for t in tokens if t not in INTERJECTIONS]
    return len(stripped), tokens


def prose_degenerate(text: str) -> bool:
    """`bool(degenerate(statistics(text, compression=False)))`, computed with early exits (the classifier's
    screening test: most fields are healthy, and each statistic is measured only as far as its verdict needs).

    Exactly the same verdict (tests/unit/classify/test_repetition.py compares the two): compression is not
    measured, so `degenerate` fires iff one of the other three statistics crosses its threshold, and
      - `function_run` (an integer) exceeds its limit iff a run of floor(limit) + 1 function words exists;
      - `distinct3` is only measured on MIN_TOKENS tokens or more;
      - `periodicity` exceeds 1.0 only where a unit of p >= 2 tokens repeats MIN_REPS times (then at least
        2p - 2 >= 2 trigrams repeat) or a token follows itself (p = 1): `_periodicity` runs only then.
    """
    limits = thresholds()
    if limits["periodicity"] < 1.0:
        return True  # periodicity is 1.0 at least
    tokens = _last_tokens(text)
    if tokens is None:
        tokens = _window_tokens(prose(text[-4 * TAIL_CHARS :], TOKEN_CHARS))
    n_trigrams = len(tokens) - 2
    if n_trigrams < 1:  # fewer than three tokens: no trigram, no repeated unit
        return _function_run(tokens) > limits["function_run"]
    run = math.floor(limits["function_run"]) + 1
    if run <= 0:
        return True
    if _speedups is not None:  # the three counts below in one pass of C
        function_run, distinct, doubled = _speedups.window_counts(tokens, _TOKEN_CLASS, run)
    else:
        classes = "".join(map(_TOKEN_CLASS.get, tokens, repeat("o")))
        function_run = "f" * run in classes  # commas map to "": a run of function words is a run of "f"
        distinct = len(set(zip(tokens, tokens[1:], tokens[2:], strict=False)))
        doubled = any(map(eq, tokens, tokens[1:]))
    if function_run:
        return True
    if len(tokens) >= MIN_TOKENS and distinct / n_trigrams < limits["distinct3"]:
        return True
    # A doubled word is a (lowercased) token after itself, so without one `stutter` is 0 (or None).
    if not doubled:
        if limits["stutter"] < 0.0 and len(tokens) >= MIN_TOKENS:
            return True
        if n_trigrams - distinct < 2:
            return False  # no unit repeated MIN_REPS times (MIN_REPS == 3), no token after itself
    elif (
        stutter := _stutter(prose(text[-4 * TAIL_CHARS :], TOKEN_CHARS), len(tokens))
    ) is not None and stutter > limits["stutter"]:
        return True
    return _periodicity(tokens) > limits["periodicity"]


def _periodicity(tokens: list[str]) -> float:
    """Most back-to-back repetitions (MIN_REPS or more) of a unit of 1-8 tokens that holds a letter (`0, 0, 0`
    is data); 1.0 when there are none. Each position's shortest repeated unit counts (regions do not overlap)."""
    # A token's last position stands for it: one byte each (a window holds fewer than 256 tokens).
    ids = dict(zip(tokens, range(len(tokens)), strict=True))
    seq = bytes(map(ids.__getitem__, tokens))
    if not _may_repeat(seq):
        return 1.0
    best = 1.0
    for m in _PERIODIC.finditer(seq):
        reps = (m.end() - m.start()) // len(m.group(1))
        if reps > best and any(c.isalpha() for b in m.group(1) for c in tokens[b]):
            best = float(reps)
    return best


def _may_repeat(seq: bytes) -> bool:
    """Whether `_PERIODIC` matches anywhere in `seq`: a unit of p <= MAX_UNIT_TOKENS repeated MIN_REPS times is a
    window where seq[k + i] == seq[k + p + i] for (MIN_REPS - 1) * p consecutive i, a run of as many zero bytes in
    seq XOR seq shifted by p (computed on integers, in C; the regex tries every unit at every position)."""
    if _speedups is not None:  # the same runs, counted in one loop of C
        return _speedups.may_repeat(seq, MAX_UNIT_TOKENS, MIN_REPS)
    n = len(seq)
    for p in range(1, MAX_UNIT_TOKENS + 1):
        if n < MIN_REPS * p:
            break
        diff = (int.from_bytes(seq[:-p], "big") ^ int.from_bytes(seq[p:], "big")).to_bytes(n - p, "big")
        if bytes((MIN_REPS - 1) * p) in diff:
            return True
    return False


# A word written twice with one space between, in the same case, before a space, a sentence mark or the line's end
# (`parsing parsing and and`); not across lines, not `ДИАПАЗОН   ДИАПАЗОН` columns of a help text.
_DOUBLED = re.compile(r"(?<!\S)([^\W\d_]+) \1(?=[ .,;:!?]|$)", re.M)


def _stutter(window: str, n_tokens: int) -> float | None:
    """How many different words the prose window writes twice in a row: salad that doubles its words doubles many
    (`parsing parsing and and environment environment`), a slip or emphasis one (`that that`, `no no`). None below
    MIN_TOKENS tokens."""
    if n_tokens < MIN_TOKENS:
        return None
    return float(len({m.group(1) for m in _DOUBLED.finditer(window)}))


def _function_run(tokens: list[str]) -> int:
    classes = "".join(map(_TOKEN_CLASS.get, tokens, repeat("o")))
    return max(map(len, classes.split("o")))


@cache
def calibration() -> dict[str, Any]:
    """degeneracy.json, written by eval.classify.calibrate, read once per process for every statistic."""
    data: dict[str, Any] = json.loads(CALIBRATION.read_text(encoding="utf-8"))
    return data


def calibrated(name: str, missing: float) -> float:
    """The calibrated threshold of the statistic `name` (its entry in degeneracy.json), or `missing` where the file has
    no entry for it (each caller passes the value that never fires)."""
    return float(calibration().get(name, {}).get("threshold", missing))


@cache
def thresholds() -> dict[str, float]:
    """The calibrated thresholds (statistic -> value; `degeneracy.json`, written by the calibration)."""
    return {name: float(calibration()["thresholds"][name]) for name in STATISTICS}


# Compression alone also finds lists of near-identical lines (file lists, link lists) that a reply may hold; with
# another statistic it corroborates a loop whose unit is longer than the token window (a paragraph).
CORROBORATING = frozenset({"compression"})


def degenerate(stats: Statistics, limits: dict[str, float] | None = None) -> list[str]:
    """The statistics that make `stats` degenerate: any crossed one but a corroborating one alone; [] if none."""
    hits = crossed(stats, limits)
    return hits if set(hits) - CORROBORATING else []


def crossed(stats: Statistics, limits: dict[str, float] | None = None) -> list[str]:
    """The statistics of `stats` beyond their thresholds (strictly: the calibration's extremes are clean)."""
    limits = thresholds() if limits is None else limits
    out = []
    for name in STATISTICS:
        value = stats.get(name)
        if value is None:
            continue
        if value < limits[name] if name in LOW_IS_DEGENERATE else value > limits[name]:
            out.append(name)
    return out
