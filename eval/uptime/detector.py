"""A sequential change detector for speculative acceptance: a betting e-detector on per-window acceptance rates.

The null hypothesis is "acceptance has not collapsed": in every window the expected acceptance rate is at least
`floor = (1 - max_relative_drop) x baseline`, where the baseline is the pooled rate of the first windows. Each
window's rate x (in [0, 1]) pays a bet 1 + lam x (floor - x), which has expectation <= 1 under the null for every
lam in [0, 1 / (1 - floor)]. The detector is the CUSUM form of the e-detector of Shin, Ramdas and Rinaldo
("E-detectors: a nonparametric framework for sequential change detection", 2023): M_t = max(M_{t-1}, 1) x bet_t,
averaged over a few bet sizes (a mixture of e-detectors is an e-detector). It alarms when M reaches 1 / alpha,
which bounds the average run length to a false alarm below by 1 / alpha windows under the null.

Two approximations, stated in the report: the baseline is estimated from the same server's first windows (not
known in advance), and windows are pooled until they hold `min_tokens` draft tokens, so that a window with a
handful of drafts does not bet on noise.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

BET_FRACTIONS = (0.25, 0.5, 0.75, 0.95)  # of the largest bet that keeps every payoff non-negative


@dataclass(frozen=True)
class Window:
    """Acceptance counts of one time window (or of several pooled ones)."""

    t_start: float
    t_end: float
    accepted: int
    draft_tokens: int

    @property
    def rate(self) -> float | None:
        return self.accepted / self.draft_tokens if self.draft_tokens > 0 else None


@dataclass(frozen=True)
class Detection:
    """What the detector saw: baseline, null floor, e-value after each tested window, and the alarm if any."""

    threshold: float
    baseline: float | None = None
    floor: float | None = None
    tested: int = 0
    e_values: tuple[float, ...] = ()
    alarm_at: int | None = None  # index into the pooled windows of the first window whose e-value crossed
    windows: tuple[Window, ...] = field(default_factory=tuple)

    @property
    def alarmed(self) -> bool:
        return self.alarm_at is not None

    @property
    def max_e_value(self) -> float | None:
        return max(self.e_values) if self.e_values else None


def pool(windows: Sequence[Window], min_tokens: int) -> list[Window]:
    """Merge consecutive windows until each holds at least `min_tokens` draft tokens; a short tail is dropped."""
    out: list[Window] = []
    start: Window | None = None
    accepted = drafted = 0
    for w in windows:
        start = start or w
        accepted, drafted = accepted + w.accepted, drafted + w.draft_tokens
        if drafted >= min_tokens:
            out.append(Window(start.t_start, w.t_end, accepted, drafted))
            start, accepted, drafted = None, 0, 0
    return out


def detect(windows: Sequence[Window], baseline_windows: int, max_relative_drop: float, alpha: float) -> Detection:
    """Run the e-detector over pooled windows; the first `baseline_windows` set the baseline and are not tested."""
    threshold = 1.0 / alpha
    if len(windows) <= baseline_windows:
        return Detection(threshold=threshold, windows=tuple(windows))
    base = windows[:baseline_windows]
    drafted = sum(w.draft_tokens for w in base)
    baseline = sum(w.accepted for w in base) / drafted if drafted else 0.0
    floor = (1.0 - max_relative_drop) * baseline
    if floor <= 0.0:  # nothing accepted at the start: there is no collapse to detect
        return Detection(threshold=threshold, baseline=baseline, floor=floor, windows=tuple(windows))
    bets = [f / (1.0 - floor) if floor < 1.0 else f for f in BET_FRACTIONS]
    states = [1.0] * len(bets)
    e_values: list[float] = []
    alarm_at = None
    for i, w in enumerate(windows[baseline_windows:], start=baseline_windows):
        x = min(max(w.rate or 0.0, 0.0), 1.0)
        states = [max(m, 1.0) * (1.0 + lam * (floor - x)) for m, lam in zip(states, bets, strict=True)]
        e = sum(states) / len(states)
        e_values.append(e)
        if alarm_at is None and e >= threshold:
            alarm_at = i
    return Detection(
        threshold=threshold,
        baseline=baseline,
        floor=floor,
        tested=len(e_values),
        e_values=tuple(e_values),
        alarm_at=alarm_at,
        windows=tuple(windows),
    )
