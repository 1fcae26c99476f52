"""Operating characteristics of the verdict's tests by simulation (benchmarks/bench_verdicts.py, unit tests).

One simulated run = `instances` instances in random order, `repeats` graded repeats per instance and cohort,
outcomes from a Beta-Binomial model (per-instance latent rate with the given ICC between repeats, shared by the
cohort and its control). Because the tests are anytime-valid, one simulated sequence of the largest size gives
the verdict of every smaller run at once: the verdict of an n-instance run is what the sequence decided by n.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from analysis import betting, corruption, planning, sequential


@dataclass(frozen=True)
class Cell:
    """Decision shares by run size for one scenario: share[k] is P(decision by sizes[k])."""

    fail: np.ndarray
    pass_: np.ndarray
    median_to_verdict: float  # median instances to a verdict among runs of the largest size that reached one
    decided: float  # share of runs of the largest size that reached a verdict


def accuracy_cell(
    rng: np.random.Generator,
    paths: int,
    sizes: list[int],
    rate: float,
    drop: float,
    repeats: int,
    icc: float,
    margin: float,
    alpha: float,
) -> Cell:
    """The accuracy test's P(FAIL) and P(PASS) by each run size for control rate `rate` and a true drop."""
    cohort = min(max(rate - drop, 0.0), 1.0)
    d = sequential.simulate_pairs(rng, paths, max(sizes), rate, cohort, repeats, icc)
    decision, used = sequential.run_paths(d, sequential.Design(margin, alpha))
    return _cell(decision, used, sizes)


def corruption_cell(
    rng: np.random.Generator,
    paths: int,
    sizes: list[int],
    base: float,
    excess: float,
    repeats: int,
    icc: float,
    ceiling: float,
    alpha: float,
    paired: bool = True,
) -> Cell:
    """The corruption test's P(FAIL) by each run size (pass_ is zero: the test only fails)."""
    if paired:
        e, lo = corruption.simulate_excess(rng, paths, max(sizes), base, excess, repeats, icc), -1.0
    else:
        p = sequential.latent_rates(rng, (paths, max(sizes)), base + excess, icc)
        e, lo = rng.binomial(repeats, p) / repeats, 0.0
    at = betting.first_crossing(betting.log_capital(e, ceiling, betting.UP, lo=lo), alpha)
    n = max(sizes)
    decision = np.where(at >= 0, sequential.FAIL, sequential.INCONCLUSIVE)
    used = np.where(at >= 0, at + 1, n)
    return _cell(decision, used, sizes)


def _cell(decision: np.ndarray, used: np.ndarray, sizes: list[int]) -> Cell:
    fail = np.array([np.mean((decision == sequential.FAIL) & (used <= s)) for s in sizes])
    ok = np.array([np.mean((decision == sequential.PASS) & (used <= s)) for s in sizes])
    decided = decision != sequential.INCONCLUSIVE
    med = float(np.median(used[decided])) if decided.any() else float("nan")
    return Cell(fail, ok, med, float(decided.mean()))


def seed_drop(rate: float) -> float:
    """The seed's effect at another control rate: the same relative loss (38.67% -> 3.80%)."""
    return rate * (1 - planning.SEED_COHORT / planning.SEED_CONTROL)


def mc_bound(alpha: float, paths: int, k: float = 3.0) -> float:
    """alpha plus k Monte Carlo standard errors of a share estimated from `paths` runs."""
    return alpha + k * float(np.sqrt(alpha * (1 - alpha) / paths))
