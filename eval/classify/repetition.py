"""`degenerate_repetition`: a unit of text (a token, a phrase, a line, a block of lines) repeated back to back
far beyond what legitimate output shows.

The measure is the longest *consecutive* periodic region of a field: a unit of `period` characters repeated
`reps` times, covering `span` characters. Legitimate text has short periodic regions (a `=====` rule, a few
identical table rows, pytest's dots) and, above all, no long ones; a looping model repeats a unit dozens of
times, usually until it hits `max_tokens`. The thresholds (`Thresholds`) were calibrated on the realistic
negatives in tests/unit/classify (code files, test logs, tables, separators, CJK text) and the loops in the
positives.

Finding the region is cheap: an anchor (the 32 characters before a position) is looked up once backwards
(`str.rfind`, in C); the distance to its previous occurrence is the candidate period, and the region is grown
in both directions by binary search over slice comparisons. Anchors sit at the end of the field (loops run
to the end) and every SPACING characters, which is enough to hit every region that crosses the thresholds.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from eval.classify.compiled import speedups as _speedups
from eval.classify.context import Context
from eval.classify.degeneracy import TAIL_CHARS, degenerate, prose_degenerate, statistics, thresholds
from eval.classify.digitrun import final_digit_run
from eval.classify.digitrun import threshold as digit_run_threshold
from eval.classify.drift import READS as DRIFT_READS
from eval.classify.drift import asked_for, language_drift
from eval.classify.drift import threshold as drift_threshold
from eval.classify.letterrun import final_letter_run
from eval.classify.letterrun import threshold as letter_run_threshold
from eval.classify.model import Span, Turn, span_at
from eval.classify.neardup import READS as NEAR_READS
from eval.classify.neardup import near_duplicates
from eval.classify.neardup import threshold as near_threshold
from eval.classify.salad import READS as SALAD_READS
from eval.classify.salad import salad

ANCHOR = 32
MAX_PERIOD = 1024
MIN_FIELD = 160
WINDOW = 65536  # long fields: analyse the first and last 64 KiB
# A region of span >= 256 with >= 16 reps has period <= span / 16, so anchors (which need the anchor and its
# previous occurrence inside the region) hit it wherever it lies when spaced by <= 256 - 32 - 16 = 208.
SPACING = 192


@dataclass(frozen=True)
class Thresholds:
    min_reps: int = 16  # anywhere, any ending
    min_span: int = 256
    min_reps_at_length: int = 6  # a loop that runs into max_tokens (finish_reason "length")
    min_span_at_length: int = 160
    min_span_one_char: int = 512  # "=====" rules, "....." progress dots and "    " indentation are legitimate
    block_reps: int = 0  # free text only (FREE_TEXT): a block repeated this often over block_span characters
    block_span: int = 0
    block_reps_at_length: int = 0  # free text only: a block repeated this often up to the max_tokens cut
    block_span_at_length: int = 0


THRESHOLDS = Thresholds()
# Content and reasoning: a paragraph or a block repeated 8 times over 512+ characters is a loop too (a model
# does not write the same paragraph eight times); the unit must hold words (`0 0 0 0` matrices are data).
# At the max_tokens cut, a paragraph three times over 512+ characters is a loop that ran into the limit (a long
# unit repeats fewer times before the limit than a short one).
FREE_TEXT = Thresholds(block_reps=8, block_span=512, block_reps_at_length=3, block_span_at_length=512)
BLOCK_MIN_LETTERS = 8


def _block_loop_ok(text: str, r: Region, truncated: bool, t: Thresholds = THRESHOLDS) -> bool:
    """A region found with the free-text thresholds: the strict ones hold, or the unit holds words."""
    if r.reps >= t.min_reps and r.end - r.start >= t.min_span:
        return True
    unit = text[r.start : r.start + r.period]
    if len(set(unit)) == 1:
        return True  # the one-character rule already applied its own (higher) span
    at_end = r.end >= len(text) - ANCHOR
    if truncated and at_end and r.reps >= t.min_reps_at_length and r.end - r.start >= t.min_span_at_length:
        return True  # the max_tokens rule (only reachable when truncated)
    return sum(c.isalpha() for c in unit) >= BLOCK_MIN_LETTERS


@dataclass(frozen=True)
class Region:
    start: int
    end: int
    period: int

    @property
    def reps(self) -> float:
        return (self.end - self.start) / self.period


def detect_degenerate_repetition(turn: Turn, ctx: Context) -> list[Span]:
    spans = []
    truncated = turn.finish_reason == "length"
    for name, text in turn.fields:
        free = name in _FREE_TEXT
        if free and truncated and (span := _blank_run_at_cut(name, text)) is not None:
            spans.append(span)
            continue
        if free and (span := _punctuation_span(name, text)) is not None:
            spans.append(span)
            continue
        region = worst_region(text, truncated, FREE_TEXT if free else THRESHOLDS) if len(text) >= MIN_FIELD else None
        if region is not None and free and not _block_loop_ok(text, region, truncated):
            region = None
        if region is None and free and len(text) >= SHORT_MIN_FIELD:
            region = short_region(text)
            if region is not None and ctx.history.contains(text[region.start : region.end][:200]):
                region = None  # the model quotes a loop it was shown (a log, a bug report)
        if region is not None:
            unit = text[region.start : region.start + region.period]
            why = f"{unit[:40]!r} x {region.reps:.0f} ({region.end - region.start} chars)"
            spans.append(span_at(name, text, region.start, region.end, why))
        elif free and (span := _statistical_span(name, text, ctx) or _other_span(name, text, ctx)) is not None:
            spans.append(span)
    return spans


def _other_span(name: str, text: str, ctx: Context) -> Span | None:
    return (
        _digit_run_span(name, text, ctx)
        or _letter_run_span(name, text, ctx)
        or _salad_span(name, text, ctx)
        or _near_duplicate_span(name, text, ctx)
        or _drift_span(name, text, ctx)
    )


def _digit_run_span(name: str, text: str, ctx: Context) -> Span | None:
    """A run of one digit that ends the field, longer than real text writes (eval/classify/digitrun.py), unless the
    model quotes it."""
    return _final_run_span(name, text, ctx, final_digit_run(text), digit_run_threshold())


def _letter_run_span(name: str, text: str, ctx: Context) -> Span | None:
    """A run of one letter that ends the field, longer than real text writes (eval/classify/letterrun.py), unless the
    model quotes it."""
    return _final_run_span(name, text, ctx, final_letter_run(text), letter_run_threshold())


def _final_run_span(name: str, text: str, ctx: Context, run: tuple[int, int], limit: float) -> Span | None:
    """The span of a run of one character `run` = (start, end) that ends the field, where it is longer than `limit`
    and the conversation does not already hold it."""
    start, end = run
    if end - start <= limit or ctx.history.contains(text[start:end][:200]):
        return None
    why = f"{text[start]!r} x {end - start} up to the end (beyond {limit:.3g})"
    return span_at(name, text, start, end, why)


def _drift_span(name: str, text: str, ctx: Context) -> Span | None:
    """An English reply whose lines switch into CJK (eval/classify/drift.py), unless the conversation asks for it.
    Content only: reasoning models mix languages in their thinking while healthy (a known trait of R1-style models)."""
    if name != "content" or text.isascii():
        return None
    count = language_drift(text[-DRIFT_READS:])
    if count <= drift_threshold() or asked_for(ctx.history.chunks):
        return None
    start = max(0, len(text) - DRIFT_READS)
    why = f"language drift: {count} lines switch from English into CJK (beyond {drift_threshold():.3g})"
    return span_at(name, text, start, len(text), why)


def _near_duplicate_span(name: str, text: str, ctx: Context) -> Span | None:
    """Long segments written again and again with a word changed (eval/classify/neardup.py), unless quoted."""
    count = _near_duplicates(text[-NEAR_READS:])
    if count <= near_threshold() or ctx.history.contains(text.strip()[-QUOTE_CHARS:]):
        return None
    start = max(0, len(text) - NEAR_READS)
    why = f"{count} near-identical sentences or paragraphs (beyond {near_threshold():.3g})"
    return span_at(name, text, start, len(text), why)


def _salad_span(name: str, text: str, ctx: Context) -> Span | None:
    """Word salad that no loop statistic finds (eval/classify/salad.py), unless the model quotes it."""
    why = _salad(text[-SALAD_READS:])
    if why is None or ctx.history.contains(text.strip()[-QUOTE_CHARS:]):
        return None
    start = len(text) - len(text.lstrip())
    return span_at(name, text, start, len(text.rstrip()), why)


# What a model emits when its logits are NaN or garbage: the same punctuation mark again and again (`!!!!!!!!`,
# `！！！！`; token 0 of many vocabularies is `!`). A reply of nothing but punctuation says nothing, and a run of one
# sentence mark far longer than emphasis is a loop (rules, dots and dashes are not sentence marks).
PUNCTUATION_ONLY_MIN = 8
PUNCTUATION_RUN_MIN = 16
_NO_WORD = re.compile(r"\s*([^\w\s](?:[^\w]*[^\w\s])?)\s*")  # fails at the first letter or digit
_SENTENCE_MARKS = "!?,;\uff01\uff1f\uff0c\uff1b\u3002\u3001"
_SENTENCE_RUNS = tuple(c * PUNCTUATION_RUN_MIN for c in _SENTENCE_MARKS)
_ASCII_SENTENCE_RUNS = tuple(run for run in _SENTENCE_RUNS if run.isascii())  # all an ASCII text can hold
_PUNCTUATION_RUN = re.compile(rf"([{_SENTENCE_MARKS}])\1{{{PUNCTUATION_RUN_MIN - 1},}}")


# Blank tokens until max_tokens: a reply cut by the limit inside a run of spaces on one line (what a model whose
# logits collapsed onto the space token emits); indentation that the cut happens to end in is shorter.
BLANK_RUN_AT_CUT = 32
_BLANK_END = re.compile(rf"[ \t\u3000]{{{BLANK_RUN_AT_CUT},}}\Z")


def _blank_run_at_cut(name: str, text: str) -> Span | None:
    m = _BLANK_END.search(text, max(0, len(text) - 4096))
    if m is None:
        return None
    return span_at(name, text, m.start(), m.end(), f"{m.end() - m.start()} blanks up to the max_tokens cut")


def _punctuation_span(name: str, text: str) -> Span | None:
    only = _NO_WORD.fullmatch(text)
    if (
        only is not None
        and only.end(1) - only.start(1) >= PUNCTUATION_ONLY_MIN
        and all(c.isspace() or unicodedata.category(c)[0] == "P" for c in only.group(1)[:4096])  # not emoji
    ):
        return span_at(name, text, only.start(1), only.end(1), "nothing but punctuation")
    if _speedups is not None:  # the runs below, found in one pass of C
        if not _speedups.repeated_char(text, _SENTENCE_MARKS, PUNCTUATION_RUN_MIN):
            return None
    elif not any(run in text for run in (_ASCII_SENTENCE_RUNS if text.isascii() else _SENTENCE_RUNS)):
        return None  # substring searches in C
    m = _PUNCTUATION_RUN.search(text)
    if m is None:
        return None
    return span_at(name, text, m.start(), m.end(), f"{m.group(1)!r} x {m.end() - m.start()}")


def _statistical_span(name: str, text: str, ctx: Context) -> Span | None:
    """A loop or token salad that the calibrated statistics find in the prose (eval/classify/degeneracy.py)."""
    if not _prose_degenerate(text[-STATISTICS_READS:]):
        return None
    if ctx.history.contains(text.strip()[-QUOTE_CHARS:]):
        return None  # the model quotes degenerate text it was shown (a log, a bug report)
    stats = statistics(text)
    hits = degenerate(stats)
    limits = thresholds()
    why = ", ".join(f"{h} {stats.get(h):.3g} beyond {limits[h]:.3g}" for h in hits)
    start = max(0, len(text) - TAIL_CHARS)
    return span_at(name, text, start, len(text), f"statistics of the prose: {why}")


# Per distinct text, the verdicts of the pure, per-field tests are kept (a bounded LRU): a text seen again (a
# reply or an observation repeated across turns and trajectories) is not measured again. Keys are the tails the
# tests read, so a huge field holds no memory: `statistics` reads only the last STATISTICS_READS characters
# and `short_region` only the last SHORT_TAIL (the verdicts are the same as on the whole text, by construction).
STATISTICS_READS = 4 * TAIL_CHARS
CACHED_TEXTS = 8192


@lru_cache(maxsize=CACHED_TEXTS)
def _salad(tail: str) -> str | None:
    return salad(tail)


@lru_cache(maxsize=CACHED_TEXTS)
def _near_duplicates(tail: str) -> int:
    return near_duplicates(tail, near_threshold())


@lru_cache(maxsize=CACHED_TEXTS)
def _prose_degenerate(tail: str) -> bool:
    return prose_degenerate(tail)


def clear_text_caches() -> None:
    """Forget the per-text verdicts (benchmarks measure the cost where no text repeats)."""
    _prose_degenerate.cache_clear()
    _short_region_tail.cache_clear()
    _salad.cache_clear()
    _near_duplicates.cache_clear()


# Short fragments: a quoted reply often shows only a piece of the loop (` is is is is ...`, `-th-th-th`, a
# CJK sentence five times), with no finish_reason. Checked in content and reasoning (free text), where a
# unit of letters repeated back to back this often has no legitimate use; arguments (code, data) are not.
_FREE_TEXT = frozenset({"content", "reasoning_content"})
SHORT_MIN_FIELD = 20
QUOTE_CHARS = 40  # the end of a degenerate field found in the conversation: the model quotes it
SHORT_ANCHOR = 8
SHORT_SPACING = 16  # a 10 x 3-character loop (30 chars) leaves 30 - 8 - 3 = 19 positions for an anchor
SHORT_MAX_PERIOD = 64
SHORT_TAIL = 1024


@dataclass(frozen=True)
class ShortThresholds:
    reps_short_unit: int = 10  # units of <= 6 characters (` is`, `-th`, `the, `)
    max_short_unit: int = 6
    reps_long_unit: int = 5  # units of 7-64 characters within a line (a phrase, a CJK sentence)
    min_letters: int = 2  # letters (any script) in the unit: `0, 0, 0` and `|---|---|` are data and tables
    one_letter_run: int = 64  # `MMMMMMMM...`: one letter repeated (laughter and `zzz` stay shorter)
    placeholder_letters: str = "xX"  # `XXXXXXXX` masks, bit diagrams and redactions are not loops


SHORT = ShortThresholds()


def short_region(text: str, t: ShortThresholds = SHORT) -> Region | None:
    """The first short-period loop of `text` (period <= 64) that crosses the short thresholds, or None.

    A fragment is read whole; of a longer text only the last SHORT_TAIL characters (a loop runs to the end,
    and long loops elsewhere are `worst_region`'s).
    """
    offset = max(0, len(text) - SHORT_TAIL)
    region = _short_region_tail(text[offset:] if offset else text, t)
    return region if region is None or not offset else Region(region.start + offset, region.end + offset, region.period)


@lru_cache(maxsize=CACHED_TEXTS)
def _short_region_tail(text: str, t: ShortThresholds) -> Region | None:
    """`short_region` of a text of at most SHORT_TAIL characters (offsets into it)."""
    n = len(text)
    rfind = text.rfind
    skip_to = 0
    anchors = (*range(SHORT_ANCHOR + SHORT_SPACING, n, SHORT_SPACING), n)
    # Every anchor's look-back in one list comprehension (most find nothing: in prose about half of the fields have
    # no anchor that recurs at all); the anchors that recur are then taken in order, as one loop over all would.
    back = SHORT_ANCHOR + SHORT_MAX_PERIOD
    if _speedups is not None:  # the anchors that recur and pass the cheap filter below, in C
        recurring = _speedups.recurring_anchors(text, anchors, SHORT_ANCHOR, back, True)
    else:
        found = [rfind(text[a - SHORT_ANCHOR : a], a - back if a > back else 0, a - 1) for a in anchors]
        recurring = [(a, j) for a, j in zip(anchors, found, strict=True) if j >= 0]
    for a, j in recurring:
        if a < skip_to:
            continue
        seg = text[a - SHORT_ANCHOR : a]
        p = a - SHORT_ANCHOR - j
        # Cheap filter first: a loop repeats the anchor one more period back too (one slice compare in C).
        if j >= p and text[j - p : j - p + SHORT_ANCHOR] == seg and not seg.isspace():
            region = _region_at(text, a, p)
            if _short_degenerate(text, region, t):
                return region
            skip_to = region.end  # one look at each periodic region
    return None


def _short_degenerate(s: str, r: Region, t: ShortThresholds) -> bool:
    if r.reps < t.reps_long_unit and r.period > 1:
        return False  # the common case: an anchor that recurs once or twice
    unit = s[r.start : r.start + r.period]
    if r.period == 1:
        if unit.isdigit():  # `0000…` and nothing else: a reply that is one digit token (tables of zeros hold more)
            return r.reps >= t.reps_short_unit and not s[: r.start].strip() and not s[r.end :].strip()
        return unit.isalpha() and unit not in t.placeholder_letters and r.end - r.start >= t.one_letter_run
    # Short units, and whole lines or table cells (duplicate rows are common), need the higher count.
    short = r.period <= t.max_short_unit or "\n" in unit or "|" in unit
    if r.reps < (t.reps_short_unit if short else t.reps_long_unit):
        return False
    return sum(c.isalpha() for c in unit) >= t.min_letters


def worst_region(text: str, truncated: bool, t: Thresholds = THRESHOLDS) -> Region | None:
    """The first periodic region of `text` that crosses the thresholds, or None."""
    n = len(text)
    offset = 0
    if n > 2 * WINDOW:  # 10 MB arguments: the two ends are where a loop shows
        head = worst_region(text[:WINDOW], False, t)
        if head is not None:
            return head
        offset, text, n = n - WINDOW, text[-WINDOW:], WINDOW
    # Loops run to the end, but a closing quote or tag may follow: three anchors near the end. The spacing of
    # the others guarantees a hit in every region that crosses `min_reps`/`min_span` (see SPACING).
    anchors = [n, n - 16, n - 48, *range(ANCHOR + SPACING, n - 48, SPACING)]
    for a, j in _recurring_anchors(text, anchors):
        period = a - ANCHOR - j
        if not _may_span(text, a, period, _min_span(t, truncated, period)):
            continue  # the region cannot be long enough for any rule (most recurring anchors: a line seen twice)
        region = _region_at(text, a, period)
        if _degenerate(text, region, truncated, t):
            return Region(region.start + offset, region.end + offset, region.period)
    return None


def _recurring_anchors(text: str, anchors: list[int]) -> list[tuple[int, int]]:
    """(anchor end, start of the anchor's previous occurrence within MAX_PERIOD) of the anchors past ANCHOR whose
    ANCHOR characters occur earlier (most do not), in order."""
    if _speedups is not None:
        pairs: list[tuple[int, int]] = _speedups.recurring_anchors(text, anchors, ANCHOR, ANCHOR + MAX_PERIOD)
        return pairs
    out = []
    for a in anchors:
        if a <= ANCHOR:
            continue
        j = text.rfind(text[a - ANCHOR : a], max(0, a - ANCHOR - MAX_PERIOD), a - 1)
        if j >= 0:
            out.append((a, j))
    return out


def _min_span(t: Thresholds, truncated: bool, p: int) -> int:
    """The shortest span of a region of period `p` that a rule of `_degenerate` can accept (reps = span / p)."""
    rules = [(t.min_span, t.min_reps)]
    if t.block_reps:
        rules.append((t.block_span, t.block_reps))
    if truncated:
        rules.append((t.min_span_at_length, t.min_reps_at_length))
        if t.block_reps_at_length:
            rules.append((t.block_span_at_length, t.block_reps_at_length))
    return min(max(span, reps * p) for span, reps in rules)


def _may_span(s: str, a: int, p: int, need: int) -> bool:
    """Necessary for `_region_at(s, a, p)` to span `need` characters or more, by two slice comparisons: its span is
    p + back + fwd (the two `_grow` results), so back + fwd >= need - p needs back >= h or fwd >= need - p - h."""
    d = need - p
    h = d // 2
    if h <= ANCHOR or d - h <= 0:
        return True  # the anchor alone (back >= ANCHOR) may already be enough
    if h <= a - p and s[a - h : a] == s[a - h - p : a - p]:
        return True
    f = d - h
    return f <= len(s) - a and s[a : a + f] == s[a - p : a - p + f]


def _region_at(s: str, a: int, p: int) -> Region:
    """The region of period `p` around anchor end `a` (the anchor recurs `p` characters earlier)."""
    if _speedups is not None and 0 < p <= a <= len(s):  # the same extents, grown character by character in C
        start, end = _speedups.region_at(s, a, p)
        return Region(start, end, p)
    back = _grow(lambda k: s[a - k : a] == s[a - k - p : a - p], a - p)
    fwd = _grow(lambda m: s[a : a + m] == s[a - p : a - p + m], len(s) - a)
    return Region(a - back - p, a + fwd, p)


def _grow(ok: Callable[[int], bool], limit: int) -> int:
    """Largest k in [0, limit] with ok(k) true (ok is monotone: true up to some k); galloping search."""
    lo, step = 0, 64
    while lo < limit:
        hi = min(limit, lo + step)
        if ok(hi):
            lo, step = hi, step * 2
            continue
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if ok(mid):
                lo = mid
            else:
                hi = mid
        return lo
    return lo


def _degenerate(s: str, r: Region, truncated: bool, t: Thresholds) -> bool:
    span = r.end - r.start
    if len(set(s[r.start : r.start + r.period])) == 1 and span < t.min_span_one_char:
        return False
    if r.reps >= t.min_reps and span >= t.min_span:
        return True
    if t.block_reps and r.reps >= t.block_reps and span >= t.block_span:
        return True
    at_end = r.end >= len(s) - ANCHOR
    block_at_length = t.block_reps_at_length and r.reps >= t.block_reps_at_length and span >= t.block_span_at_length
    if truncated and at_end and block_at_length:
        return True
    return truncated and at_end and r.reps >= t.min_reps_at_length and span >= t.min_span_at_length
