"""Statistics for clustered binary outcomes: units are repeats nested in instances, which are not independent.

Every interval here treats the instance as the unit of sampling:
- `cluster_bootstrap`: resample instances with replacement (all repeats of an instance travel together);
  percentile intervals of a ratio sum(resolved) / sum(graded). Paired: the same resampled instances in both
  cohorts, so instance difficulty cancels in a difference.
- `sandwich_se`: the cluster-robust (linearised ratio) standard error, used where a closed form is needed
  (minimum detectable difference, sequential tests).
- `icc`: one-way ANOVA intra-cluster correlation of the binary outcome.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats as sps

BOOTSTRAP_REPLICATES = 4000
BOOTSTRAP_SEED = 20240601


@dataclass(frozen=True)
class Clustered:
    """Per-instance counts for one cohort: y resolved of m graded (infra failures excluded from m)."""

    instance_ids: list[str]
    y: np.ndarray
    m: np.ndarray

    @property
    def resolved(self) -> int:
        return int(self.y.sum())

    @property
    def graded(self) -> int:
        return int(self.m.sum())

    @property
    def rate(self) -> float:
        return self.resolved / self.graded if self.graded else float("nan")


def bootstrap_indices(n: int, replicates: int = BOOTSTRAP_REPLICATES, seed: int = BOOTSTRAP_SEED) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, n, size=(replicates, n))


def wilson(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Wilson score interval; used when every unit has the same outcome (a bootstrap would give [p, p])."""
    if n == 0:
        return (float("nan"), float("nan"))
    z = sps.norm.ppf(0.5 + level / 2)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    lo = 0.0 if k == 0 else max(0.0, centre - half)
    hi = 1.0 if k == n else min(1.0, centre + half)
    return (lo, hi)


def rate_ci(c: Clustered, level: float = 0.95, seed: int = BOOTSTRAP_SEED) -> tuple[float, float]:
    """Cluster-bootstrap percentile CI of a resolve rate; Wilson on the instance count when there is no spread."""
    keep = c.m > 0
    y, m = c.y[keep], c.m[keep]
    if len(y) == 0:
        return (float("nan"), float("nan"))
    if y.sum() == 0 or y.sum() == m.sum():
        # No variation to resample; the number of instances is the conservative effective sample size.
        return wilson(round(float(y.sum() / m.sum()) * len(y)), len(y), level)
    idx = bootstrap_indices(len(y), seed=seed)
    reps = y[idx].sum(axis=1) / m[idx].sum(axis=1)
    lo, hi = np.quantile(reps, [0.5 - level / 2, 0.5 + level / 2])
    return (float(lo), float(hi))


def paired_bootstrap(a: Clustered, b: Clustered, seed: int = BOOTSTRAP_SEED) -> np.ndarray:
    """Replicates of rate(a) - rate(b) resampling the instances both cohorts have (same draw for both)."""
    idx = bootstrap_indices(len(a.y), seed=seed)
    ma, mb = a.m[idx].sum(axis=1), b.m[idx].sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        reps = a.y[idx].sum(axis=1) / ma - b.y[idx].sum(axis=1) / mb
    return reps[np.isfinite(reps)]


def sandwich_se(c: Clustered) -> float:
    """Cluster-robust SE of the ratio estimator sum(y)/sum(m) (linearisation, small-sample factor n/(n-1))."""
    n = len(c.y)
    if n < 2 or c.graded == 0:
        return float("nan")
    resid = c.y - c.rate * c.m
    return float(math.sqrt(n / (n - 1) * np.sum(resid**2)) / c.graded)


def paired_se(a: Clustered, b: Clustered) -> float:
    """Cluster-robust SE of rate(a) - rate(b) on shared instances (the covariance of the pairing included)."""
    n = len(a.y)
    if n < 2:
        return float("nan")
    resid = (a.y - a.rate * a.m) / a.graded - (b.y - b.rate * b.m) / b.graded
    return float(math.sqrt(n / (n - 1) * np.sum(resid**2)))


def icc(c: Clustered) -> float:
    """One-way ANOVA ICC of a binary outcome with clusters of (possibly) unequal size; clipped to [0, 1]."""
    keep = c.m > 0
    y, m = c.y[keep].astype(float), c.m[keep].astype(float)
    k, big_n = len(y), m.sum()
    if k < 2 or big_n <= k:
        return float("nan")
    p_i, p = y / m, y.sum() / big_n
    msb = np.sum(m * (p_i - p) ** 2) / (k - 1)
    msw = np.sum(y - m * p_i**2) / (big_n - k)
    m0 = (big_n - np.sum(m**2) / big_n) / (k - 1)
    denom = msb + (m0 - 1) * msw
    return float(min(1.0, max(0.0, (msb - msw) / denom))) if denom > 0 else float("nan")


def mdd(n_instances: int, repeats: float, p: float, rho: float, alpha: float = 0.05, power: float = 0.8) -> float:
    """Minimum detectable difference of a paired two-sided test on n instances with `repeats` per cohort.

    With an instance effect shared by both cohorts (ICC rho), the per-instance difference of means has variance
    2 p (1 - p) (1 - rho) / repeats: the pairing removes instance difficulty, the repeats average the rest.
    """
    if n_instances < 1 or not (0 < p < 1) or math.isnan(rho):
        return float("nan")
    z = sps.norm.ppf(1 - alpha / 2) + sps.norm.ppf(power)
    return float(z * math.sqrt(2 * p * (1 - p) * max(1 - rho, 1e-9) / repeats / n_instances))


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value: binomial test of b successes in b + c discordant pairs at 1/2."""
    if b + c == 0:
        return 1.0
    return float(sps.binomtest(b, b + c, 0.5).pvalue)
