"""Which comparisons of a (possibly running) run are decided: `python -m analysis decide RUN_DIR --json`.

`specqual run`'s early stop asks this while rollouts run. For each cohort with a control, it walks the shared
instance order (the run's `instances.json` when the pipeline wrote one, else the instances seen) and keeps the
longest prefix of instances complete in both cohorts: every planned repeat has a graded or infra outcome. An
instance with no graded repeat in either cohort (infra only) is complete but carries no difference and is
skipped. The sequential test (analysis.sequential) runs on that prefix, so the answer depends only on finished
instances in a fixed order: a resumed run, or the final report, reaches the same decision at the same instance.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis import sequential
from analysis.load import RunData
from analysis.summary import DEFAULT_POLICY, planned_order
from store.decisions import Comparison, Decisions

DONE = ("resolved", "unresolved", "infra")


def repeats_of(run: RunData) -> int:
    spec = run.meta.get("spec") or {}
    return int(((spec.get("workloads") or {}).get("swebench") or {}).get("repeats") or 1)


def prefix_differences(units: pd.DataFrame, cohort: str, control: str, ids: list[str], repeats: int) -> np.ndarray:
    """Per-instance drops (control - cohort) over the longest prefix of `ids` complete in both cohorts."""
    rates = []
    for name in (cohort, control):
        mine = units[(units["cohort"] == name) & units["outcome"].isin(DONE)]
        grouped = mine.groupby("instance_id")
        rates.append((grouped["outcome"].size(), mine[mine["outcome"] != "infra"].groupby("instance_id")["resolved"]))
    d: list[float] = []
    for i in ids:
        counts = [int(done.get(i, 0)) for done, _ in rates]
        if min(counts) < repeats:
            break
        graded = [g.get_group(i) if i in g.groups else None for _, g in rates]
        if graded[0] is None or graded[1] is None:
            continue  # infra on every repeat of one side: nothing to compare on this instance
        d.append(float(graded[1].astype(float).mean() - graded[0].astype(float).mean()))
    return np.asarray(d, dtype=float)


def decisions(run: RunData) -> Decisions:
    """The decision of every comparison on its complete prefix (the JSON `decide --json` prints)."""
    ids, repeats = planned_order(run), repeats_of(run)
    out: dict[str, Comparison] = {}
    for name in run.cohort_names:
        meta = run.cohort_meta(name)
        control = meta.control
        if not control or control not in run.cohort_names:
            continue
        policy = {**DEFAULT_POLICY, **(meta.policy or {})}
        margin, alpha = float(policy["non_inferiority_margin"]), float(policy["alpha"])
        d = prefix_differences(run.units, name, control, ids, repeats) if len(run.units) else np.zeros(0)
        o = sequential.monitor(d, sequential.Design(margin, alpha))
        if o.decision != "INCONCLUSIVE":  # bounds where it was decided: the same however far the run went on
            o = sequential.monitor(d[: o.instances], sequential.Design(margin, alpha))
        out[name] = Comparison(
            control=control,
            decision=o.decision,
            decided_at=o.instances if o.decision != "INCONCLUSIVE" else None,
            prefix=int(d.size),
            planned=len(ids),
            estimate=None if np.isnan(o.estimate) else o.estimate,
            lower=o.lower,
            upper=o.upper,
            margin=margin,
            alpha=alpha,
        )
    return Decisions(method=sequential.METHOD, repeats=repeats, comparisons=out)
