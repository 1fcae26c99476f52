"""Early stopping: a group-sequential non-inferiority test on paired per-instance differences.

The comparison is monitored every `batch` instances up to `max_instances`. At look k with n_k instances,
d_i = rate_control_i - rate_cohort_i (each instance's resolve rate over its repeats), est = mean(d),
se = sd(d) / sqrt(n_k) (instances are the independent units; repeats stay inside d_i), and two one-sided tests
of the non-inferiority margin run against O'Brien-Fleming-type boundaries c_k = C * sqrt(K / k):

- FAIL as soon as (est - margin) / se > c_k   (the drop is larger than the margin),
- PASS as soon as (margin - est) / se > c_k   (the drop is smaller than the margin),
- INCONCLUSIVE when the last look decides neither.

Because se is estimated at every look, c_k is used on the t scale: t_{n_k - 1} quantile of Phi(c_k).

C is calibrated so that each one-sided test has overall type-I error alpha when the true drop equals the margin
(the least favourable case): the (1 - alpha) quantile of max_k Z(t_k) / sqrt(K / k) for a Brownian motion
observed at the information fractions t_k = n_k / N. The boundary is wide early (nothing stops on the first
few instances by luck) and close to the fixed-sample value at the end.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy import stats as sps

CALIBRATION_PATHS = 200_000
FAIL, PASS, INCONCLUSIVE = 1, 2, 0
DECISION_NAMES = {FAIL: "FAIL", PASS: "PASS", INCONCLUSIVE: "INCONCLUSIVE"}


@dataclass(frozen=True)
class Design:
    margin: float
    alpha: float = 0.05
    batch: int = 50
    max_instances: int = 500

    @property
    def looks(self) -> np.ndarray:
        """Instance counts at which the test looks (the last one is max_instances)."""
        steps = [*range(self.batch, self.max_instances, self.batch), self.max_instances]
        return np.array(steps, dtype=int)

    def boundaries(self) -> np.ndarray:
        looks = self.looks
        k = np.arange(1, len(looks) + 1)
        return obf_constant(tuple(looks / looks[-1]), self.alpha) * np.sqrt(len(looks) / k)

    def t_boundaries(self) -> np.ndarray:
        """The boundaries on the t scale (n_k - 1 degrees of freedom): the SE is estimated at every look."""
        z = self.boundaries()
        return np.asarray(sps.t.ppf(sps.norm.cdf(z), np.maximum(self.looks - 1, 1)))


@lru_cache(maxsize=64)
def obf_constant(fractions: tuple[float, ...], alpha: float) -> float:
    """C such that P(Z(t_k) > C sqrt(K/k) for some k) = alpha under H0 (Monte Carlo, fixed seed)."""
    t = np.asarray(fractions)
    increments = np.diff(np.concatenate([[0.0], t]))
    rng = np.random.default_rng(12345)
    walk = np.cumsum(rng.standard_normal((CALIBRATION_PATHS, len(t))) * np.sqrt(increments), axis=1)
    z = walk / np.sqrt(t)
    scale = np.sqrt(len(t) / np.arange(1, len(t) + 1))
    return float(np.quantile((z / scale).max(axis=1), 1 - alpha))


@dataclass(frozen=True)
class Outcome:
    decision: str
    instances: int
    look: int
    estimate: float
    z: float
    boundary: float


def run_paths(d: np.ndarray, design: Design) -> tuple[np.ndarray, np.ndarray]:
    """Vectorised monitoring of many sequences: d is (paths, instances) -> (decision codes, instances used)."""
    d = np.atleast_2d(np.asarray(d, dtype=float))
    cum, cum2 = np.cumsum(d, axis=1), np.cumsum(d * d, axis=1)
    decision = np.full(d.shape[0], INCONCLUSIVE)
    used = np.full(d.shape[0], min(design.max_instances, d.shape[1]))
    open_ = np.ones(d.shape[0], dtype=bool)
    for n, c in zip(design.looks, design.t_boundaries(), strict=True):
        if n > d.shape[1]:
            break
        est = cum[:, n - 1] / n
        var = np.maximum(cum2[:, n - 1] - n * est * est, 0.0) / (n - 1)
        se = np.sqrt(var / n)
        with np.errstate(divide="ignore", invalid="ignore"):
            fail = open_ & (se > 0) & ((est - design.margin) / se > c)
            ok = open_ & (se > 0) & ((design.margin - est) / se > c)
        decision[fail], decision[ok] = FAIL, PASS
        used[fail | ok] = n
        open_ &= ~(fail | ok)
    return decision, used


def monitor(d: np.ndarray, design: Design) -> Outcome:
    """The decision the sequential test reaches on one observed sequence of per-instance differences."""
    decision, used = run_paths(d, design)
    n = int(used[0])
    looks = list(design.looks)
    look = looks.index(n) if n in looks else len(looks) - 1
    sample = np.asarray(d, dtype=float)[:n]
    est = float(sample.mean()) if n else float("nan")
    se = float(sample.std(ddof=1) / math.sqrt(n)) if n > 1 else float("nan")
    z = (est - design.margin) / se if se and se > 0 else float("nan")
    return Outcome(DECISION_NAMES[int(decision[0])], n, look + 1, est, z, float(design.t_boundaries()[look]))


def simulate_pairs(
    rng: np.random.Generator,
    paths: int,
    instances: int,
    control_rate: float,
    cohort_rate: float,
    repeats: int = 3,
    rho: float = 0.5,
) -> np.ndarray:
    """Per-instance differences (control - cohort) from a Beta-Binomial model with ICC rho between repeats.

    Instance difficulty p_i ~ Beta with mean control_rate and 1/(a+b+1) = rho; the cohort's probability is a
    monotone transform of the same p_i with mean cohort_rate, so cohorts share instance difficulty as in a
    paired run.
    """
    s = 1 / rho - 1
    p = rng.beta(control_rate * s, (1 - control_rate) * s, size=(paths, instances))
    if cohort_rate <= control_rate:
        q = p * (cohort_rate / control_rate)
    else:
        q = 1 - (1 - p) * ((1 - cohort_rate) / (1 - control_rate))
    yc = rng.binomial(repeats, p)
    yt = rng.binomial(repeats, q)
    return (yc - yt) / repeats
