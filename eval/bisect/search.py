"""Binary search for the first bad build, over any evaluator (`Judge`) of build indices.

Repeats: a build counts as good only after `repeats` runs that all exit 0; the first run that exits 1 makes it
bad (a reproducer's exit 1 is evidence; its exit 0 may be a miss of a flaky bug). Exit 125 marks a build
untestable (as in `git bisect run`); the search then tries the nearest testable neighbour. Any other exit code is
an error of the reproducer and stops the bisect.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol

from eval.bisect.models import BisectResult, Status, StepRecord

GOOD, BAD, SKIP = 0, 1, 125


class BisectError(Exception):
    """The reproducer failed in a way that says nothing about the bug (an exit code other than 0, 1, 125)."""


class Judge(Protocol):
    """Runs the reproducer once on build `index` (preparing it on first use); returns the exit code."""

    def __call__(self, index: int) -> int: ...


def judge_step(index: int, label: str, run_once: Judge, repeats: int, detail: str = "") -> StepRecord:
    start = time.monotonic()
    codes: list[int] = []
    while len(codes) < repeats:
        code = run_once(index)
        codes.append(code)
        if code not in (GOOD, BAD, SKIP):
            raise BisectError(f"reproducer exited {code} on {label} (0 good, 1 bad, 125 untestable): see its output")
        if code in (BAD, SKIP):
            break
    outcome = "bad" if BAD in codes else "skip" if SKIP in codes else "good"
    return StepRecord(
        index=index,
        label=label,
        outcome=outcome,
        exit_codes=codes,
        runs=len(codes),
        flaky=GOOD in codes and BAD in codes,
        seconds=round(time.monotonic() - start, 3),
        detail=detail,
    )


def _nearest_untested(lo: int, hi: int, skipped: set[int]) -> int | None:
    """The index nearest the middle of (lo, hi), exclusive, that was not skipped."""
    mid = (lo + hi) // 2
    for d in range(hi - lo):
        for i in (mid - d, mid + d):
            if lo < i < hi and i not in skipped:
                return i
    return None


def bisect(
    labels: list[str],
    run_once: Judge,
    repeats: int = 1,
    reproducer: str = "",
    on_step: Callable[[StepRecord], None] | None = None,
    detail: Callable[[int], str] | None = None,
) -> BisectResult:
    """Find the first bad build of `labels` (oldest first). Both ends are tested first: the newest must be bad
    and the oldest good for a boundary to exist."""
    if not labels:
        raise ValueError("bisect needs at least one build")
    if repeats < 1:
        raise ValueError("repeats must be >= 1")
    steps: dict[int, StepRecord] = {}
    order: list[StepRecord] = []

    def test(i: int) -> str:
        rec = judge_step(i, labels[i], run_once, repeats, detail(i) if detail else "")
        steps[i] = rec
        order.append(rec)
        if on_step:
            on_step(rec)
        return rec.outcome

    n = len(labels)
    last = test(n - 1)
    if last != "bad":
        return _result(labels, reproducer, repeats, order, None, None, "all_good" if last == "good" else "undecided")
    if n == 1:
        return _result(labels, reproducer, repeats, order, 0, None, "first_is_bad")
    # The oldest testable build is the lower end: untestable old builds (a release that does not install, or
    # lacks the feature) are walked past one by one.
    lo = 0
    while lo < n - 1 and test(lo) == "skip":
        lo += 1
    if lo == n - 1:
        return _result(labels, reproducer, repeats, order, n - 1, None, "undecided")
    if steps[lo].outcome == "bad":
        return _result(labels, reproducer, repeats, order, lo, None, "first_is_bad")
    hi = n - 1
    skipped: set[int] = set()
    while True:
        i = _nearest_untested(lo, hi, skipped)
        if i is None:
            break
        outcome = test(i)
        if outcome == "good":
            lo = i
        elif outcome == "bad":
            hi = i
        else:
            skipped.add(i)
    if hi == lo + 1:
        return _result(labels, reproducer, repeats, order, hi, lo, "found")
    return _result(labels, reproducer, repeats, order, hi, lo, "undecided")  # only skipped builds lie between


def _result(
    labels: list[str],
    reproducer: str,
    repeats: int,
    order: list[StepRecord],
    first_bad: int | None,
    last_good: int | None,
    status: Status,
) -> BisectResult:
    return BisectResult(
        labels=labels,
        reproducer=reproducer,
        repeats=repeats,
        steps=order,
        first_bad=first_bad,
        last_good=last_good,
        status=status,
        flaky_steps=sorted({s.index for s in order if s.flaky}),
    )
