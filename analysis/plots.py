"""Report plots (matplotlib, Agg backend, PNG): each function writes one file and returns its name, or None
when the run has nothing to plot for it (a canary-only run has no accuracy bars, a SWE-bench-only run no
first-divergence histogram).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from analysis.qualify import Analysis
from analysis.tables import per_repo_accuracy

COLORS = {"PASS": "#2e7d32", "FAIL": "#c62828", "INCONCLUSIVE": "#f9a825"}


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig: Any, out: Path, name: str) -> str:
    out.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(out / name, dpi=110)
    _pyplot().close(fig)
    return name


def accuracy(result: Analysis, out: Path) -> str | None:
    """Resolved accuracy per cohort with its clustered 95% CI, coloured by verdict."""
    rows = [s for s in result.summaries.values() if s.accuracy is not None and s.ci95]
    if not rows:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8, 0.6 * len(rows) + 1.5))
    y = np.arange(len(rows))[::-1]
    acc = np.array([100 * (s.accuracy or 0) for s in rows])
    lo = acc - np.array([100 * s.ci95[0] for s in rows if s.ci95])
    hi = np.array([100 * s.ci95[1] for s in rows if s.ci95]) - acc
    ax.barh(y, acc, color=[COLORS.get(s.verdict or "", "#607d8b") for s in rows], alpha=0.85)
    ax.errorbar(acc, y, xerr=[lo, hi], fmt="none", ecolor="black", capsize=4)
    for yi, a, top, s in zip(y, acc, acc + hi, rows, strict=True):
        ax.text(top + 1, yi, f"{a:.2f}%  {s.verdict}", va="center", fontsize=9)
    ax.set_yticks(y, [s.label for s in rows])
    ax.set_xlabel("resolved accuracy, % (95% CI, cluster bootstrap over instances)")
    ax.set_xlim(0, max(100 * (s.ci95[1] if s.ci95 else 0) for s in rows) * 1.3 + 5)
    return _save(fig, out, "accuracy.png")


def labels(result: Analysis, out: Path) -> str | None:
    """Share of trajectories carrying each corruption label, per cohort."""
    rows = [s for s in result.summaries.values() if s.classified]
    names = sorted({lab for s in rows for lab in s.labels or {}})
    if not rows:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(9, 4))
    names = names or ["(no labels)"]
    width = 0.8 / len(rows)
    x = np.arange(len(names))
    for i, s in enumerate(rows):
        vals = [100 * (s.labels or {}).get(n, 0) / (s.classified or 1) for n in names]
        ax.bar(x + i * width - 0.4 + width / 2, vals, width, label=s.label)
    ax.set_xticks(x, names, rotation=20, ha="right")
    ax.set_ylabel("% of trajectories with the label")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return _save(fig, out, "labels.png")


def flips(result: Analysis, out: Path) -> str | None:
    """Per-instance flip table (majority outcome) of every comparison, as heat maps."""
    if not result.comparisons:
        return None
    plt = _pyplot()
    items = list(result.comparisons.items())
    fig, axes = plt.subplots(1, len(items), figsize=(4.2 * len(items), 3.8), squeeze=False)
    for ax, (name, c) in zip(axes[0], items, strict=True):
        f = c.flips
        grid = np.array([[f["both"], f["control_only"]], [f["cohort_only"], f["neither"]]])
        ax.imshow(grid, cmap="Blues")
        for (i, j), v in np.ndenumerate(grid):
            colour = "white" if v > grid.max() / 2 else "black"  # readable on dark and light cells
            ax.text(j, i, f"{v}", ha="center", va="center", color=colour, fontsize=12, fontweight="bold")
        ax.set_xticks([0, 1], ["cohort solves", "cohort fails"])
        ax.set_yticks([0, 1], ["control solves", "control fails"])
        ax.set_title(f"{result.summaries[name].label}\nMcNemar p = {c.mcnemar_p:.2g}", fontsize=10)
    return _save(fig, out, "flips.png")


def acceptance_vs_corruption(result: Analysis, out: Path) -> str | None:
    """Speculative acceptance rate (from /metrics) against the corrupted-trajectory rate (or canary divergence)."""
    pts = []
    for s in result.summaries.values():
        bad = s.corruption_rate
        if bad is None and s.probes_compared:
            bad = (s.probes_diverged or 0) / s.probes_compared
        if s.acceptance is not None and bad is not None:
            pts.append((s.acceptance, bad, s))
    if not pts:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    for acc, bad, s in pts:
        ax.scatter(100 * acc, 100 * bad, s=80, color=COLORS.get(s.verdict or "", "#607d8b"))
        ax.annotate(s.label, (100 * acc, 100 * bad), textcoords="offset points", xytext=(6, 6), fontsize=9)
    ax.set_xlabel("speculative acceptance rate, % (accepted / draft tokens)")
    ax.set_ylabel("corrupted trajectories, % (canary divergence if none)")
    ax.set_xlim(0, 100)
    ax.set_ylim(-2, max(100 * b for _, b, _ in pts) * 1.2 + 5)
    return _save(fig, out, "acceptance_vs_corruption.png")


def repos(result: Analysis, out: Path, top: int = 12) -> str | None:
    """Resolved accuracy per repository and cohort (the largest `top` repositories)."""
    units = result.run.units
    graded = units[units["outcome"].isin(["resolved", "unresolved"])] if not units.empty else units
    if graded.empty or graded["repo"].isna().all():
        return None
    pivot = per_repo_accuracy(graded).head(top)
    acc = pivot["sum"] / pivot["count"].replace(0, np.nan)
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(9, 0.38 * len(acc) + 1.6))
    cohorts = [c for c in result.summaries if c in acc.columns]
    y = np.arange(len(acc))[::-1]
    markers = "osD^vP*X"
    for i, c in enumerate(cohorts):
        ax.scatter(100 * acc[c], y, s=45, marker=markers[i % len(markers)], label=result.summaries[c].label)
    ax.set_yticks(y, [f"{r} (n={int(pivot['count'].loc[r].max())})" for r in acc.index], fontsize=8)
    ax.grid(axis="y", color="#dddddd")
    ax.set_xlabel("resolved accuracy, % (n = graded units per cohort)")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return _save(fig, out, "repos.png")


def first_divergence(result: Analysis, out: Path) -> str | None:
    """Histogram of the first divergent token index of diverged canary probes, per cohort."""
    rows = [s for s in result.summaries.values() if s.first_divergences]
    if not rows:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 3.8))
    top = max(max(s.first_divergences) for s in rows)
    bins = np.arange(-0.5, top + 1.5, 1)
    ax.hist([s.first_divergences for s in rows], bins=bins, label=[s.label for s in rows])
    ax.set_xticks(range(top + 1))
    ax.set_xlim(-0.5, top + 0.5)
    ax.set_xlabel("index of the first divergent token")
    ax.set_ylabel("probes")
    ax.legend(fontsize=8)
    return _save(fig, out, "first_divergence.png")


ALL = (accuracy, labels, flips, acceptance_vs_corruption, repos, first_divergence)
