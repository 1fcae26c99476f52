"""The whole analysis of one run: summaries, paired comparisons with their controls, and verdicts.

from analysis import analyze
result = analyze("results/my-run")
result.summaries["patched-mtp5"].verdict      # "PASS"
result.comparisons["patched-mtp5"].mcnemar_p
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from analysis import corruption, sequential, verdict
from analysis.load import RunData, load_run
from analysis.paired import PairedComparison, compare
from analysis.summary import CohortSummary, counted_units, summarize
from store.layout import SCHEMA_VERSION
from store.report_records import CohortResult, ProbeCounts, ReportSummary

SUMMARY_SCHEMA_VERSION = SCHEMA_VERSION


@dataclass
class Analysis:
    run: RunData
    summaries: dict[str, CohortSummary]
    comparisons: dict[str, PairedComparison]

    @property
    def has_units(self) -> bool:
        return any(s.units is not None for s in self.summaries.values())

    @property
    def has_probes(self) -> bool:
        return any(s.probes_total is not None for s in self.summaries.values())

    def verdicts(self) -> dict[str, str]:
        return {name: s.verdict or "INCONCLUSIVE" for name, s in self.summaries.items()}


def analyze(path: Path | str | RunData) -> Analysis:
    run = path if isinstance(path, RunData) else load_run(path)
    summaries = summarize(run)
    units = counted_units(run, summaries)
    comparisons: dict[str, PairedComparison] = {}
    for name, s in summaries.items():
        if s.control and s.units is not None and s.control in summaries:
            alpha = float(s.policy["alpha"])
            cmp = compare(units, name, s.control, alpha, float(s.policy["non_inferiority_margin"]))
            if cmp is not None:
                comparisons[name] = cmp
        if s.control in summaries:
            s.control_corruption_rate = summaries[s.control].corruption_rate
        if s.corruption_rate is not None:
            paired_with = s.control if s.control_corruption_rate is not None else None
            ceiling, alpha = float(s.policy["corruption_ceiling"]), float(s.policy["alpha"])
            s.corruption_test = corruption.excess_test(units, name, paired_with, ceiling, alpha)
        s.verdict, s.reason = verdict.decide(s, comparisons.get(name))
    return Analysis(run, summaries, comparisons)


def summary_json(result: Analysis) -> ReportSummary:
    """The machine-readable summary (`summary.json`); fields a workload did not produce are null."""
    cohorts = {}
    for name, s in result.summaries.items():
        probes = None
        if s.probes_total is not None:
            probes = ProbeCounts(total=s.probes_total, compared=s.probes_compared, diverged=s.probes_diverged)
        cohorts[name] = CohortResult(
            label=s.label,
            factors=s.factors,
            control=s.control,
            units=s.units,
            resolved=s.resolved,
            graded=s.graded,
            accuracy=s.accuracy,
            ci95=list(s.ci95) if s.ci95 else None,
            infra_failures=s.infra_failures,
            corrupted_trajectories=s.corrupted_trajectories,
            labels=s.labels,
            probes=probes,
            acceptance=s.acceptance,
            verdict=s.verdict,
            reason=s.reason,
        )
    return ReportSummary(
        run_id=result.run.meta.get("run_id"),
        ci_method="cluster bootstrap over instances (percentile)",
        decision_method=sequential.METHOD,
        cohorts=cohorts,
    )
