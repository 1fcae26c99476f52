"""Report tables: the cohort table in the motivating format, comparisons, labels, canary, repositories.

Cohort | vLLM state handling | MTP | Resolved     | Accuracy | 95% CI        | Infra failures | Corrupted ...
Original regression | Unpatched (fix reverted) | 5 | 57 / 1,500 | 3.80% | 2.87% - 4.80% | 0 | 59.27% ...
"""

from __future__ import annotations

from collections import Counter

import pandas as pd

from analysis.document import Table
from analysis.fmt import num, pct, pts
from analysis.qualify import Analysis
from analysis.summary import CohortSummary


def ratio(k: int | None, n: int | None) -> str:
    return "—" if k is None or n is None else f"{k:,} / {n:,}"


def varying_factors(summaries: list[CohortSummary]) -> list[tuple[str, str]]:
    """(factor, column title) for the factors whose value differs between cohorts, in declaration order."""
    order: list[str] = []
    for s in summaries:
        order += [f for f in s.factors if f not in order]
    out = []
    for f in order:
        if len({s.factors.get(f) for s in summaries}) > 1:
            title = next((s.columns[f] for s in summaries if f in s.columns), f)
            out.append((f, title))
    return out


def _factor_cells(s: CohortSummary, factors: list[tuple[str, str]]) -> list[str]:
    return [s.factor_labels.get(f) or s.factors.get(f, "") for f, _ in factors]


def _canary_cell(s: CohortSummary) -> str:
    if s.probes_total is None:
        return "—"
    if s.probes_infra and s.probes_infra == s.probes_total:
        return f"server failed ({s.probes_infra} / {s.probes_total} unanswered)"
    if not s.probes_compared:
        return f"reference ({s.probes_total} run)"
    return ratio(s.probes_diverged, s.probes_compared)


def cohort_table(result: Analysis, workload: str | None = None) -> Table:
    """One row per cohort (per cohort that runs `workload`, when given); SWE-bench columns when the run has
    units, canary columns when it has probes (only the workload's own columns, when given)."""
    summaries = [s for s in result.summaries.values() if workload is None or s.runs(workload)]
    factors = varying_factors(summaries)
    header = ["Cohort", *(title for _, title in factors)]
    with_units = result.has_units and workload in (None, "swebench")
    with_probes = result.has_probes and workload in (None, "canary")
    if with_units:
        header += ["Resolved", "Accuracy", "95% CI", "Infra failures", "Corrupted trajectories"]
    if with_probes:
        header += ["Canary diverged", "First divergence"]
    header.append("Verdict")
    rows = []
    for s in summaries:
        row = [s.label, *_factor_cells(s, factors)]
        if with_units:
            ci = f"{pct(s.ci95[0])} – {pct(s.ci95[1])}" if s.ci95 else "—"
            infra = "—" if s.infra_failures is None else f"{s.infra_failures:,}"
            row += [ratio(s.resolved, s.graded), pct(s.accuracy), ci, infra, _corrupted_cell(s)]
        if with_probes:
            first = f"token {min(s.first_divergences)}" if s.first_divergences else "—"
            row += [_canary_cell(s), first]
        row.append(f"**{s.verdict}**")
        rows.append(row)
    first_numeric = 1 + len(factors)
    return Table(header, rows, right=set(range(first_numeric, len(header) - 1)))


def _corrupted_cell(s: CohortSummary) -> str:
    if s.corruption_rate is None:
        return "—"
    return f"{s.corrupted_trajectories:,} ({pct(s.corruption_rate)})"


def verdict_table(result: Analysis) -> Table:
    rows = [[s.label, s.name, f"**{s.verdict}**", s.reason or ""] for s in result.summaries.values()]
    return Table(["Cohort", "Name", "Verdict", "Reason"], rows)


def comparison_table(result: Analysis) -> Table:
    header = ["Cohort", "Control", "Instances", "Control acc.", "Cohort acc.", "Difference (95% CI), pts"]
    header += ["Drop bounds (1 - 2 alpha), pts", "McNemar p", "MDD, pts", "ICC", "Sequential test"]
    rows = []
    for name, c in result.comparisons.items():
        seq = "—" if c.sequential is None else f"{c.sequential.decision} at {c.sequential.instances} instances"
        rows.append(
            [
                result.summaries[name].label,
                result.summaries[c.control].label if c.control in result.summaries else c.control,
                f"{c.instances:,}",
                pct(c.rate_control),
                pct(c.rate_cohort),
                f"{pts(c.diff)} ({pts(c.diff_ci95[0])} .. {pts(c.diff_ci95[1])})",
                f"{pts(c.drop_ci[0])} .. {pts(c.drop_ci[1])}",
                num(c.mcnemar_p, ".2g"),
                num(100 * c.mdd, ".1f"),
                num(c.icc, ".2f"),
                seq,
            ]
        )
    return Table(header, rows, right=set(range(2, 10)))


def flip_table(result: Analysis, name: str) -> Table:
    f = result.comparisons[name].flips
    rows = [
        ["control solves", f"{f['both']:,}", f"{f['control_only']:,}"],
        ["control fails", f"{f['cohort_only']:,}", f"{f['neither']:,}"],
    ]
    return Table(["per-instance majority", "cohort solves", "cohort fails"], rows, right={1, 2})


def labels_table(result: Analysis) -> Table | None:
    summaries = [s for s in result.summaries.values() if s.labels is not None]
    names = sorted({lab for s in summaries for lab in s.labels or {}})
    if not names:
        return None
    rows = []
    for lab in names:
        cells = [f"{(s.labels or {}).get(lab, 0):,} ({pct((s.labels or {}).get(lab, 0) / s.classified)})"
                 if s.classified else "—" for s in summaries]  # fmt: skip
        rows.append([f"`{lab}`", *cells])
    header = ["Label (trajectories with it)", *(s.label for s in summaries)]
    return Table(header, rows, right=set(range(1, len(header))))


def canary_table(result: Analysis) -> Table | None:
    probes = result.run.probes
    if probes.empty:
        return None
    rows = []
    for (cohort, mode), g in probes.groupby(["cohort", "mode"], sort=False):
        compared = g[g["diverged"].notna() & g["infra_error"].isna()]
        first = Counter(int(x) for x in compared[compared["diverged"].astype(bool)]["first_divergence"].dropna())
        hist = ", ".join(f"token {k}: {v}" for k, v in sorted(first.items())) or "—"
        div = int(compared["diverged"].astype(bool).sum())
        infra = int(g["infra_error"].notna().sum())
        shown = ratio(div, len(compared)) if len(compared) else ("failed" if infra == len(g) else "reference")
        # The judgement (eval/canary/judge.py); records without one: every divergence counts.
        judged = compared["judgement"]
        bad = int(((judged == "corrupted") | (judged.isna() & compared["diverged"].astype(bool))).sum())
        corrupt = ratio(bad, len(compared)) if len(compared) else "—"
        rows.append([result.summaries[str(cohort)].label, str(mode), f"{len(g)}", shown, corrupt,
                     f"{infra}", hist])  # fmt: skip
    header = ["Cohort", "Mode", "Probes", "Diverged / compared", "Judged corrupted", "Infra", "First divergence"]
    return Table(header, rows, {2, 3, 4, 5})


def repo_table(result: Analysis) -> Table | None:
    units = result.run.units
    graded = units[units["outcome"].isin(["resolved", "unresolved"])]
    if graded.empty or graded["repo"].isna().all():
        return None
    pivot = per_repo_accuracy(graded)
    cohorts = [c for c in result.summaries if c in pivot.columns.get_level_values(1)]
    rows = []
    for repo, row in pivot.iterrows():
        cells = [_repo_cell(int(row[("sum", c)]), int(row[("count", c)])) for c in cohorts]
        rows.append([f"`{repo}`", *cells])
    header = ["Repository", *(result.summaries[c].label for c in cohorts)]
    return Table(header, rows, right=set(range(1, len(header))))


def _repo_cell(resolved: int, graded: int) -> str:
    return f"{ratio(resolved, graded)} ({pct(resolved / graded, 1)})" if graded else "—"


def per_repo_accuracy(graded: pd.DataFrame) -> pd.DataFrame:
    """repo x cohort resolved counts (`sum`) and graded counts (`count`), repos by size."""
    frame = graded.assign(resolved=graded["resolved"].astype(float))
    pivot = frame.pivot_table(index="repo", columns="cohort", values="resolved", aggfunc=["sum", "count"], fill_value=0)
    return pivot.loc[pivot["count"].sum(axis=1).sort_values(ascending=False).index]
