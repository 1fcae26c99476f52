"""`python -m analysis compare RUN_A RUN_B`: two runs of the same matrix, cohort by cohort.

Accuracy of each run, the difference B - A with a paired cluster-bootstrap CI over the instances both runs
graded (the same instance in two runs is a pair), canary divergence and verdicts side by side.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from analysis import stats
from analysis.document import Block, Heading, Para, Table, to_markdown
from analysis.paired import clustered
from analysis.qualify import Analysis, analyze
from analysis.tables import pct, ratio


class MatrixMismatchError(ValueError):
    """The two runs share no cohort with the same factors."""


def shared_cohorts(a: Analysis, b: Analysis) -> list[str]:
    shared = [n for n in a.summaries if n in b.summaries]
    same = [n for n in shared if a.summaries[n].factors == b.summaries[n].factors]
    if not same:
        raise MatrixMismatchError(
            f"runs {a.run.path} and {b.run.path} share no cohort with the same factors "
            f"({', '.join(a.summaries)} vs {', '.join(b.summaries)})"
        )
    return same


def difference(a: Analysis, b: Analysis, cohort: str) -> tuple[float, tuple[float, float], int] | None:
    """B - A on the instances both runs graded, its 95% paired cluster-bootstrap CI, and the instance count."""
    ca, cb = clustered(a.run.units, cohort), clustered(b.run.units, cohort)
    ids_a = set(np.array(ca.instance_ids)[ca.m > 0])
    shared = sorted(ids_a & set(np.array(cb.instance_ids)[cb.m > 0]))
    if not shared:
        return None
    pa, pb = clustered(a.run.units, cohort, shared), clustered(b.run.units, cohort, shared)
    reps = stats.paired_bootstrap(pb, pa)
    lo, hi = np.quantile(reps, [0.025, 0.975]) if len(reps) else (np.nan, np.nan)
    return pb.rate - pa.rate, (float(lo), float(hi)), len(shared)


def _row(a: Analysis, b: Analysis, cohort: str) -> list[str]:
    sa, sb = a.summaries[cohort], b.summaries[cohort]
    diff = difference(a, b, cohort) if sa.units is not None and sb.units is not None else None
    dtext = "—"
    if diff is not None:
        dtext = f"{100 * diff[0]:+.2f} ({100 * diff[1][0]:+.2f} .. {100 * diff[1][1]:+.2f}), n={diff[2]}"
    canary = [ratio(s.probes_diverged, s.probes_compared) if s.probes_compared else "—" for s in (sa, sb)]
    changed = "" if sa.verdict == sb.verdict else " (changed)"
    return [sa.label, ratio(sa.resolved, sa.graded), pct(sa.accuracy), ratio(sb.resolved, sb.graded),
            pct(sb.accuracy), dtext, *canary, f"{sa.verdict} → {sb.verdict}{changed}"]  # fmt: skip


def compare_runs(run_a: Path | str, run_b: Path | str) -> str:
    a, b = analyze(run_a), analyze(run_b)
    cohorts = shared_cohorts(a, b)
    header = ["Cohort", "Resolved A", "Accuracy A", "Resolved B", "Accuracy B", "B - A, pts (95% CI)"]
    header += ["Canary A", "Canary B", "Verdict A → B"]
    blocks: list[Block] = [
        Heading(1, f"Run comparison: {a.run.path.name} (A) vs {b.run.path.name} (B)"),
        Para(
            f"Spec hashes: A `{str(a.run.meta.get('spec_hash'))[:16]}`, B `{str(b.run.meta.get('spec_hash'))[:16]}`. "
            "Differences are paired on the instances both runs graded (cluster bootstrap over instances)."
        ),
        Table(header, [_row(a, b, c) for c in cohorts], right=set(range(1, 8))),
    ]
    only = sorted(set(a.summaries) ^ set(b.summaries))
    if only:
        blocks.append(Para("Cohorts in only one run: " + ", ".join(f"`{n}`" for n in only)))
    return to_markdown(blocks)
