"""The corruption decision as a test: is the cohort's corrupted-trajectory share above the ceiling?

With a control: per instance classified in both cohorts, e_i = share_cohort_i - share_control_i (corrupted
trajectories / classified trajectories of that instance), in [-1, 1]; FAIL when a bet on "the mean excess is
above the ceiling" (analysis.betting, in the run's instance order) reaches capital 1/alpha, i.e. the excess over
the control exceeds the ceiling with significance alpha (anytime-valid, paired by instance). Without a control:
the same bet on the shares themselves, in [0, 1], against the ceiling. The counts are shown whatever the test
says; a count above the ceiling that the test cannot yet call significant is a note, not a PASS of evidence.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from analysis import betting
from store import order


@dataclass(frozen=True)
class CorruptionTest:
    instances: int
    excess: float  # pooled: cohort share - control share (or the share itself without a control)
    lower: float  # (1 - alpha) lower confidence-sequence bound of the mean per-instance excess (or share)
    significant: bool  # the bet reached 1/alpha: the excess is above the ceiling at level alpha
    decided_at: int | None  # instances in order when it did
    paired: bool


def shares(units: pd.DataFrame, cohort: str) -> pd.DataFrame:
    """Per-instance corrupted and classified trajectory counts of one cohort."""
    mine = units[(units["cohort"] == cohort) & units["classified"].astype(bool)]
    corrupted = mine["corrupted"].fillna(False).astype(bool)
    return corrupted.groupby(mine["instance_id"]).agg(["sum", "count"])


def excess_test(
    units: pd.DataFrame, cohort: str, control: str | None, ceiling: float, alpha: float
) -> CorruptionTest | None:
    """The corruption test of `cohort` (paired with `control` when given); None when nothing was classified."""
    a = shares(units, cohort)
    if control is not None:
        b = shares(units, control)
        ids = order.ordered(set(a.index) & set(b.index))
        if not ids:
            return None
        a, b = a.loc[ids], b.loc[ids]
        e = (a["sum"] / a["count"] - b["sum"] / b["count"]).to_numpy(dtype=float)
        pooled = a["sum"].sum() / a["count"].sum() - b["sum"].sum() / b["count"].sum()
        lo = -1.0
    else:
        ids = order.ordered(a.index)
        if not ids:
            return None
        a = a.loc[ids]
        e = (a["sum"] / a["count"]).to_numpy(dtype=float)
        pooled, lo = a["sum"].sum() / a["count"].sum(), 0.0
    at = int(betting.first_crossing(betting.log_capital(e[None, :], ceiling, betting.UP, lo=lo), alpha)[0])
    return CorruptionTest(
        instances=len(ids),
        excess=float(pooled),
        lower=betting.bound(e, betting.UP, alpha, lo=lo),
        significant=at >= 0,
        decided_at=at + 1 if at >= 0 else None,
        paired=control is not None,
    )


def simulate_excess(
    rng: np.random.Generator, paths: int, instances: int, base: float, excess: float, repeats: int, rho: float
) -> np.ndarray:
    """Per-instance paired excesses (cohort - control shares) for the benchmark: Beta-Binomial, shared difficulty."""
    from analysis.sequential import latent_rates

    p = latent_rates(rng, (paths, instances), base, rho)
    q = np.clip(p + excess, 0.0, 1.0)  # an additive shift: every instance gets `excess` more corruption
    return (rng.binomial(repeats, q) - rng.binomial(repeats, p)) / repeats
