"""The sampled-mode test: randomized PITs, an anytime-valid e-process, and an equivalence confidence sequence.

**PIT.** Order the vocabulary by descending reference probability (ties by token id). A token x with reference
probability p(x) and mass F(x-) before it gets u = F(x-) + V p(x), V ~ U(0, 1) drawn by the judge. If the server
samples from the reference distribution, each u is U(0, 1) given everything before it, so the u's of a run are iid
uniform whatever the prompts, positions and batching. A token with p(x) = 0 (outside top-k / top-p) is a support
violation: a definitive FAIL. The map (x, V) -> u is one-to-one, so a per-position shift of total variation d moves
exactly d of the PIT's mass at that position; the ordering puts shifts toward likely tokens near 0 and shifts
toward unlikely ones (a temperature too high, a mask not applied) near 1.

**FAIL side (level alpha at every sample size).** Bin u into B equal bins for B in `RESOLUTIONS`. For each B the
Krichevsky-Trofimov mixture (Dirichlet(1/2) over the bin probabilities) divided by the uniform likelihood is a
test martingale under the null; their average is one too. Ville's inequality: P(sup_n E_n >= 1/alpha) <= alpha,
so probing may stop the moment E_n crosses 1/alpha, or look after every batch, and the false-alarm rate stays <=
alpha.

A shift toward likely tokens (or away from them: a temperature too high, a mask not applied) moves the PIT's
mean, and a second half of the e-process bets on that directly: a uniform mixture over `BETS` of
prod (1 + lam (1 - 2u_i)). The e-process is the average of the two halves (each half an average of test
martingales): the bins catch any shape, the bets need about half the tokens for a shift of the mean.

**PASS side (equivalence).** Bin u into `EQ_BINS` bins; TV of the binned law from uniform is max_A (pi(A) -
|A|/B) over bin sets A. A two-sided normal-mixture confidence sequence (Robbins; Howard et al. 2021) for each of
the 2^(B-1) - 1 complementary pairs of sets, at alpha_eq / (2^(B-1) - 1) each, bounds it uniformly over time:
TV in [TV_hat - r_n, TV_hat + r_n]. PASS once TV_hat + r_n <= `tolerance`: a shift larger than the tolerance is
then excluded at level alpha_eq (a shift of mass d per position from the other tokens to the most likely one
moves at least d (1 - 1/B) of the binned PIT mass).

**bf16.** Reference and server logits differ by rounding, so the null holds only within a small TV (`slack`,
measured: docs/trust/sampled.md). With slack > 0 a FAIL also needs the confidence sequence's lower bound above
the slack: a valid anytime test of "TV <= slack".
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from itertools import combinations

import numpy as np
from scipy.special import gammaln

RESOLUTIONS = (2, 4, 8, 16)
EQ_BINS = 8
# Bets on the PIT's mean: prod (1 + lam (1 - 2u)) is a test martingale for every |lam| <= 1 (E[1 - 2u] = 0).
BETS = (-0.8, -0.4, -0.2, -0.1, -0.05, 0.05, 0.1, 0.2, 0.4, 0.8)


def randomized_pit(probs: np.ndarray, token: int, v: float) -> float | None:
    """u = F(x-) + v p(x) with the vocabulary ordered by descending probability; None when p(x) == 0."""
    p = float(probs[token])
    if p <= 0.0:
        return None
    # Mass strictly before x in the order (descending p, then ascending id).
    before = float(probs[probs > p].sum()) + float(probs[:token][probs[:token] == p].sum())
    return min(max(before + v * p, 0.0), 1.0)


def _bins(u: np.ndarray, b: int) -> np.ndarray:
    return np.minimum((u * b).astype(np.int64), b - 1)


def kt_log_e(counts: np.ndarray) -> float:
    """log of the KT mixture likelihood of bin counts over the uniform likelihood (one resolution)."""
    b, n = counts.size, int(counts.sum())
    a = 0.5
    mix = gammaln(b * a) - gammaln(n + b * a) + float(np.sum(gammaln(counts + a) - gammaln(a)))
    return mix + n * math.log(b)


def normal_mixture_radius(n: int, alpha: float, rho: float) -> float:
    """Half-width, on the mean, of the two-sided normal-mixture confidence sequence for [0,1]-valued draws."""
    if n == 0:
        return math.inf
    v = n / 4.0  # Hoeffding: a [0, 1] variable is sub-Gaussian with variance proxy 1/4
    return math.sqrt((v + rho) * (2 * math.log(1 / alpha) + math.log((v + rho) / rho))) / n


class Decision(StrEnum):
    FAIL = "FAIL"
    PASS = "PASS"
    UNDECIDED = "UNDECIDED"


@dataclass
class SequentialTest:
    """Feed PITs (and support violations) as they come; `decision()` may be read at any time."""

    alpha: float = 0.05
    alpha_eq: float = 0.05
    tolerance: float = 0.05
    slack: float = 0.0
    rho: float = 250.0  # the normal mixture's width: tightest near n = 4 rho / ... (a few thousand tokens)
    counts: dict[int, np.ndarray] = field(default_factory=dict)
    eq_counts: np.ndarray = field(default_factory=lambda: np.zeros(EQ_BINS, dtype=np.int64))
    support_violations: int = 0
    n: int = 0
    bet_logs: np.ndarray = field(default_factory=lambda: np.zeros(len(BETS)))

    def __post_init__(self) -> None:
        if not self.counts:
            self.counts = {b: np.zeros(b, dtype=np.int64) for b in RESOLUTIONS}
        self._subsets = _subset_masks(EQ_BINS)

    def add(self, us: Iterable[float]) -> None:
        u = np.fromiter(us, dtype=np.float64)
        if u.size == 0:
            return
        for b, c in self.counts.items():
            c += np.bincount(_bins(u, b), minlength=b)
        self.eq_counts += np.bincount(_bins(u, EQ_BINS), minlength=EQ_BINS)
        self.bet_logs += np.log1p(np.outer(BETS, 1.0 - 2.0 * u)).sum(axis=1)
        self.n += int(u.size)

    def add_support_violation(self, count: int = 1) -> None:
        self.support_violations += count

    def log_e(self) -> float:
        """log of 1/2 (mean of the KT e-values) + 1/2 (mean of the bets' e-values)."""
        bins = _log_mean([kt_log_e(c) for c in self.counts.values()])
        bets = _log_mean([float(x) for x in self.bet_logs])
        return _log_mean([bins, bets])

    def tv_hat(self) -> float:
        if self.n == 0:
            return 0.0
        dev = self.eq_counts / self.n - 1.0 / EQ_BINS
        return float(np.abs(self._subsets @ dev).max())

    def radius(self) -> float:
        return normal_mixture_radius(self.n, self.alpha_eq / len(self._subsets), self.rho)

    def tv_bounds(self) -> tuple[float, float]:
        t, r = self.tv_hat(), self.radius()
        return max(0.0, t - r), min(1.0, t + r)

    def decision(self) -> Decision:
        if self.support_violations:
            return Decision.FAIL
        lower, upper = self.tv_bounds()
        if self.log_e() >= math.log(1 / self.alpha) and (self.slack <= 0 or lower > self.slack):
            return Decision.FAIL
        if upper <= self.tolerance:
            return Decision.PASS
        return Decision.UNDECIDED

    def summary(self) -> dict[str, float | int | str]:
        lower, upper = self.tv_bounds()
        return {
            "decision": self.decision().value,
            "tokens": self.n,
            "support_violations": self.support_violations,
            "log_e": round(float(self.log_e()), 4),
            "e_threshold": round(1 / self.alpha, 4),
            "tv_hat": round(self.tv_hat(), 5),
            "tv_lower": round(lower, 5),
            "tv_upper": round(upper, 5),
            "tolerance": self.tolerance,
            "slack": self.slack,
        }


def _log_mean(logs: list[float]) -> float:
    top = max(logs)
    return float(top + math.log(sum(math.exp(x - top) for x in logs) / len(logs)))


def _subset_masks(b: int) -> np.ndarray:
    """One indicator row per nontrivial bin set up to complement (the set holding bin 0, without the full set)."""
    rows = []
    for size in range(1, b):
        for combo in combinations(range(b), size):
            if 0 in combo:
                row = np.zeros(b)
                row[list(combo)] = 1.0
                rows.append(row)
    return np.array(rows)
