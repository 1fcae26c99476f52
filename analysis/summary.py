"""Per-cohort summaries: counts, resolve rate with its clustered CI, infra, corruption, canary, acceptance.

Fields a workload did not produce stay None (a canary-only run has no units; a SWE-bench-only run no probes).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from analysis import stats
from analysis.corruption import CorruptionTest
from analysis.load import RunData
from analysis.paired import clustered
from analysis.server import ServerHealth, server_health
from store import order
from store.acceptance import acceptance as store_acceptance
from store.atomic import read_json_object as read_json
from store.canary_records import CanarySummary
from store.layout import CANARY_JSON, EARLY_STOP, INSTANCES
from store.record_io import read_record
from store.records import InstanceOrder
from store.unit_records import EarlyStopRecord

DEFAULT_POLICY = {
    "non_inferiority_margin": 0.03,
    "corruption_ceiling": 0.02,
    "max_infra_rate": 0.05,
    "canary_must_be_clean": True,
    "alpha": 0.05,
}


@dataclass
class CohortSummary:
    name: str
    label: str
    factors: dict[str, str]
    factor_labels: dict[str, str]
    columns: dict[str, str]
    control: str | None
    policy: dict[str, Any]
    workloads: list[str] | None = None  # what the cohort runs (cohort.json); None in runs that predate it
    units: int | None = None
    graded: int | None = None
    resolved: int | None = None
    accuracy: float | None = None
    ci95: tuple[float, float] | None = None
    infra_failures: int | None = None
    ungraded: int | None = None
    classified: int | None = None
    corrupted_trajectories: int | None = None
    control_corruption_rate: float | None = None  # the control's, set where both were classified (analysis.qualify)
    corruption_test: CorruptionTest | None = None  # the corruption decision's test (analysis.qualify)
    early_stop: EarlyStopRecord | None = None  # <cohort>/early_stop.json: the run stopped its rollouts here
    after_stop_units: int = 0  # units that finished after the early stop's decision (in flight then): not counted
    labels: dict[str, int] | None = None
    probes_total: int | None = None
    probes_compared: int | None = None
    probes_diverged: int | None = None
    probes_corrupted: int | None = None  # judged corrupted (eval/canary/judge.py); older records: diverged
    probes_near_ties: int | None = None  # diverged by a benign near-tie flip
    probe_corruption_reason: str | None = None  # the first corrupted probe's judgement reason
    probes_infra: int | None = None
    first_divergences: list[int] = field(default_factory=list)
    probe_reference: str | None = None
    server_error: str | None = None  # the engine's own error when canary requests went unanswered (canary.json)
    canary_blind: str | None = None  # canary.json's reason when the canary could not see a bug class it vouches for
    acceptance: float | None = None
    uptime: dict[str, Any] | None = None  # <run>/<cohort>/uptime.json: the soak's phases and verdict (eval/uptime)
    server: ServerHealth | None = None  # deaths and restarts of the cohort's server (server_events.jsonl)
    verdict: str | None = None
    reason: str | None = None

    def runs(self, workload: str) -> bool:
        """Whether the cohort runs `workload` (canary | swebench); runs that predate the record: every one."""
        return self.workloads is None or workload in self.workloads

    @property
    def corruption_rate(self) -> float | None:
        if not self.classified or self.corrupted_trajectories is None:
            return None
        return self.corrupted_trajectories / self.classified

    @property
    def missing_rate(self) -> float | None:
        """Share of units without a grade: infra failures plus units not graded (yet)."""
        if not self.units:
            return None
        return ((self.infra_failures or 0) + (self.ungraded or 0)) / self.units


def summarize(run: RunData) -> dict[str, CohortSummary]:
    out = {}
    for name in run.cohort_names:
        meta = run.cohort_meta(name)
        s = CohortSummary(
            name=name,
            label=meta.label or name,
            factors=dict(meta.factors),
            factor_labels=dict(meta.factor_labels),
            columns=dict(meta.columns),
            control=meta.control,
            policy={**DEFAULT_POLICY, **(meta.policy or {})},
            workloads=list(meta.workloads) if meta.workloads is not None else None,
        )
        s.early_stop = read_record(run.path / name / EARLY_STOP, EarlyStopRecord)
        units = run.units
        decided = decided_instances(run, s.early_stop) if len(units) else None
        if decided is not None:
            mine = units["cohort"] == name
            keep = ~mine | units["instance_id"].isin(decided)
            s.after_stop_units = int((~keep).sum())
            units = units[keep]
        _add_units(s, units)
        _add_probes(s, run.probes)
        canary = read_record(run.path / name / CANARY_JSON, CanarySummary) if s.probes_total else None
        if canary and s.probes_infra:
            s.server_error = canary.server_error
        if canary and canary.verdict == "inconclusive":  # blind is not clean (eval/canary/results.py)
            s.canary_blind = canary.reason or "the canary did not exercise what it vouches for"
        s.uptime = read_json(run.path / name / "uptime.json")
        s.acceptance = acceptance(run.metrics, name)
        s.server = server_health(run.path / name)
        out[name] = s
    return out


def planned_order(run: RunData) -> list[str]:
    """The run's instance order: instances.json (written by the pipeline) or the ids seen so far."""
    recorded = read_record(run.path / INSTANCES, InstanceOrder)
    if recorded is not None:
        return recorded.instances
    return order.ordered(run.units["instance_id"].unique()) if len(run.units) else []


def decided_instances(run: RunData, early_stop: EarlyStopRecord | None) -> list[str] | None:
    """The instances an early-stopped cohort was decided on: the first `decided_at` of the run's order.

    Units of later instances were in flight when the decision came; how many of them finish depends on timing,
    so counting them would make the table differ from machine to machine (0/13 on one, 0/17 on another for the
    same decision at instance 9). None when the cohort was not stopped early.
    """
    if early_stop is None or early_stop.decided_at <= 0:
        return None
    return planned_order(run)[: early_stop.decided_at]


def counted_units(run: RunData, summaries: dict[str, CohortSummary]) -> pd.DataFrame:
    """The run's units without those an early-stopped cohort finished after its decision (see
    `decided_instances`): what the tables, the paired comparison and the corruption test count."""
    units = run.units
    for name, s in summaries.items():
        decided = decided_instances(run, s.early_stop) if len(units) else None
        if decided is not None:
            units = units[(units["cohort"] != name) | units["instance_id"].isin(decided)]
    return units


def _add_units(s: CohortSummary, units: pd.DataFrame) -> None:
    mine = units[units["cohort"] == s.name]
    if mine.empty:
        return
    c = clustered(units, s.name)
    s.units = len(mine)
    s.graded, s.resolved = c.graded, c.resolved
    s.accuracy = c.rate if c.graded else None
    s.ci95 = stats.rate_ci(c) if c.graded else None
    s.infra_failures = int((mine["outcome"] == "infra").sum())
    s.ungraded = int((mine["outcome"] == "ungraded").sum())
    classified = mine[mine["classified"]]
    s.classified = len(classified)
    s.corrupted_trajectories = int(classified["corrupted"].fillna(False).astype(bool).sum())
    labels: dict[str, int] = {}
    for lab in classified["labels"]:
        for key, turns in (lab or {}).items():
            if turns:
                labels[key] = labels.get(key, 0) + 1
    s.labels = dict(sorted(labels.items()))


def _add_probes(s: CohortSummary, probes: pd.DataFrame) -> None:
    mine = probes[probes["cohort"] == s.name]
    if mine.empty:
        return
    s.probes_total = len(mine)
    s.probes_infra = int(mine["infra_error"].notna().sum())
    compared = mine[mine["diverged"].notna() & mine["infra_error"].isna()]
    s.probes_compared = len(compared)
    diverged = compared[compared["diverged"].astype(bool)]
    s.probes_diverged = len(diverged)
    judged = compared["judgement"]
    corrupt = compared[(judged == "corrupted") | (judged.isna() & compared["diverged"].astype(bool))]
    s.probes_corrupted = len(corrupt)
    s.probes_near_ties = int((judged == "near_tie").sum())
    reasons = corrupt["judgement_reason"].dropna()
    s.probe_corruption_reason = f"{corrupt.iloc[0]['probe_id']}: {reasons.iloc[0]}" if len(reasons) else None
    s.first_divergences = [int(x) for x in corrupt["first_divergence"].dropna()]
    refs = compared["reference_cohort"].dropna().unique()
    s.probe_reference = ", ".join(str(r) for r in refs) or None


def acceptance(metrics: pd.DataFrame, cohort: str) -> float | None:
    """Accepted / proposed draft tokens (store.acceptance: restart-safe counter growth) across the snapshots of the
    SWE-bench rollouts when the cohort ran any (the rate is joined to the trajectories' outcomes), else across all
    of them (canary only).

    The canary's probes are foreign text, whose drafts a trained model accepts far less often: on the organism
    over P/D on the H200, 20% over the canary against 75% over the rollouts, 48% mixed.
    """
    mine = metrics[metrics["cohort"] == cohort].sort_values("t")
    if "workload" in mine.columns and (mine["workload"] == "swebench").any():
        mine = mine[mine["workload"] == "swebench"]
    records = [{k: v for k, v in row.items() if _present(v)} for row in mine.to_dict("records")]
    found = store_acceptance(records)
    return None if found is None else found.rate


def _present(value: Any) -> bool:
    """A DataFrame cell that holds a value (pandas fills a missing field with NaN or None)."""
    return isinstance(value, list | tuple | str) or not pd.isna(value)
