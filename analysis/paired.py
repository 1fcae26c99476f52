"""Paired comparison of a cohort against its control on the instances both have.

Per-instance flip table on the majority outcome (resolved in more than half of an instance's graded repeats),
exact McNemar on its discordant cells, the difference in resolve rate with its 95% confidence-sequence
interval, the ICC, the minimum detectable difference, and the decision: the anytime-valid sequential test
(analysis.sequential) on the per-instance drops in the run's instance order, whose confidence-sequence bounds
are the drop interval the verdict quotes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from analysis import betting, sequential, stats
from store import order


@dataclass(frozen=True)
class PairedComparison:
    cohort: str
    control: str
    instances: int
    repeats: float
    rate_cohort: float
    rate_control: float
    diff: float  # cohort - control
    diff_ci95: tuple[float, float]
    drop_ci: tuple[float, float]  # control - cohort: the two one-sided (1 - alpha) confidence-sequence bounds
    drop_ci_level: float
    se: float
    flips: dict[str, int] = field(default_factory=dict)
    mcnemar_p: float = float("nan")
    icc: float = float("nan")
    mdd: float = float("nan")
    sequential: sequential.Outcome | None = None
    instances_union: int = 0  # instances graded in either cohort (the shared ones are `instances`)

    @property
    def relative(self) -> float:
        return self.rate_cohort / self.rate_control if self.rate_control else float("nan")


def clustered(units: pd.DataFrame, cohort: str, instances: list[str] | None = None) -> stats.Clustered:
    """Per-instance (resolved, graded) counts of one cohort; infra failures and ungraded units are left out."""
    graded = units[(units["cohort"] == cohort) & units["outcome"].isin(["resolved", "unresolved"])]
    grouped = graded.groupby("instance_id")["resolved"].agg(["sum", "count"])
    if instances is not None:
        grouped = grouped.reindex(instances, fill_value=0)
    return stats.Clustered(
        list(grouped.index), grouped["sum"].to_numpy(dtype=float), grouped["count"].to_numpy(dtype=float)
    )


def flip_table(control: stats.Clustered, cohort: stats.Clustered) -> dict[str, int]:
    """Counts of instances by majority outcome: both, control_only, cohort_only, neither, and ties."""
    fc, ft = control.y / control.m, cohort.y / cohort.m
    tie = (fc == 0.5) | (ft == 0.5)
    c, t = fc > 0.5, ft > 0.5
    keep = ~tie
    return {
        "both": int(np.sum(c & t & keep)),
        "control_only": int(np.sum(c & ~t & keep)),
        "cohort_only": int(np.sum(~c & t & keep)),
        "neither": int(np.sum(~c & ~t & keep)),
        "ties": int(np.sum(tie)),
    }


def compare(units: pd.DataFrame, cohort: str, control: str, alpha: float, margin: float) -> PairedComparison | None:
    """The paired comparison, or None when the two cohorts share no graded instance."""
    a_all, b_all = clustered(units, cohort), clustered(units, control)
    ids_a, ids_b = set(np.array(a_all.instance_ids)[a_all.m > 0]), set(np.array(b_all.instance_ids)[b_all.m > 0])
    shared = order.ordered(ids_a & ids_b)  # the run's instance order: the sequential test reads it as it ran
    if not shared:
        return None
    a, b = clustered(units, cohort, shared), clustered(units, control, shared)
    diff = a.rate - b.rate
    flips = flip_table(b, a)
    rho = stats.icc(b)
    repeats = float(b.m.mean())
    d = b.y / b.m - a.y / a.m
    seq = sequential.monitor(d, sequential.Design(margin=margin, alpha=alpha))
    return PairedComparison(
        cohort=cohort,
        control=control,
        instances=len(shared),
        repeats=repeats,
        rate_cohort=a.rate,
        rate_control=b.rate,
        diff=diff,
        diff_ci95=_diff_ci95(d),
        drop_ci=(seq.lower, seq.upper),
        drop_ci_level=1 - 2 * alpha,
        se=stats.paired_se(a, b),
        flips=flips,
        mcnemar_p=stats.mcnemar_exact(flips["control_only"], flips["cohort_only"]),
        icc=rho,
        mdd=stats.mdd(len(shared), repeats, b.rate, rho, alpha=alpha),
        sequential=seq,
        instances_union=len(ids_a | ids_b),
    )


def _diff_ci95(d: np.ndarray) -> tuple[float, float]:
    """95% two-sided interval of cohort - control: the 97.5% one-sided bounds of the drop, negated."""
    upper = betting.bound(d, betting.DOWN, 0.025)
    lower = betting.bound(d, betting.UP, 0.025)
    return (-upper, -lower)
