"""The report's uptime section (issue 29): acceptance over time from each cohort's metrics.jsonl, and the uptime
verdicts of `specqual soak` (`<run>/<cohort>/uptime.json`).

Acceptance per window comes from `store.acceptance.windows` (the one restart-safe computation, shared with the
acceptance monitor that wrote the verdicts), over the snapshots of the uptime session (`workload: uptime`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from analysis.document import Block, Heading, Image, Para, Table
from analysis.qualify import Analysis
from analysis.uptime_evidence import evidence
from store.acceptance import windows
from store.atomic import read_jsonl

WORKLOAD = "uptime"  # eval.uptime.session.WORKLOAD (analysis never imports eval)
WINDOW_S = 5.0


def uptime_records(run_dir: Path) -> dict[str, dict[str, Any]]:
    """cohort -> its uptime.json, for every cohort directory that has one."""
    out = {}
    for path in sorted(Path(run_dir).glob("*/uptime.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            continue
        if isinstance(data, dict):
            out[path.parent.name] = data
    return out


def series(run_dir: Path, cohort: str, width_s: float = WINDOW_S) -> list[dict[str, Any]]:
    """Acceptance per window of one cohort's uptime session: seconds since its first snapshot, rate, counts."""
    records = [r for r in read_jsonl(Path(run_dir) / cohort / "metrics.jsonl") if r.get("workload") == WORKLOAD]
    rows = windows(records, width_s)
    if not rows:
        return []
    t0 = rows[0][0]
    return [
        {"t": (start - t0), "t_end": (end - t0), "rate": a.rate, "draft_tokens": a.draft_tokens,
         "per_position_rate": list(a.per_position_rate), "t_abs": start}
        for start, end, a in rows
    ]  # fmt: skip


def plot_acceptance(
    run_dir: Path,
    out: Path,
    width_s: float = WINDOW_S,
    name: str = "uptime_acceptance.png",
    cohorts: list[str] | None = None,
) -> str | None:
    """Acceptance over time, one line per speculative cohort (only `cohorts` when given), its detector's null
    floor dotted (an x marks an alarm); None without data."""
    every = {c: series(run_dir, c, width_s) for c in uptime_records(run_dir) if cohorts is None or c in cohorts}
    lines = {c: rows for c, rows in every.items() if any(w["rate"] is not None for w in rows)}
    if not lines:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 3.6))
    records = uptime_records(run_dir)
    for cohort, rows in lines.items():
        pts = [(w["t_end"], w["rate"]) for w in rows if w["rate"] is not None]
        label = f"{cohort}: {records[cohort].get('verdict')}"
        (line,) = ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=".", label=label)
        detector = (records[cohort].get("monitor") or {}).get("detector", {})
        if isinstance(detector.get("floor"), int | float) and detector["floor"] > 0:  # the detector's null floor
            ax.axhline(detector["floor"], color=line.get_color(), linestyle=":", linewidth=1)
        for phase in records[cohort].get("phases") or []:  # when each canary phase began (a dashed line)
            at = phase.get("started_at")
            if isinstance(at, int | float) and at >= rows[0]["t_abs"]:
                ax.axvline(at - rows[0]["t_abs"], color=line.get_color(), linestyle="--", linewidth=0.8, alpha=0.6)
                ax.annotate(str(phase.get("phase")), (at - rows[0]["t_abs"], 0.02), fontsize=7, rotation=90,
                            color=line.get_color(), ha="right")  # fmt: skip
        alarm = detector.get("alarm")
        if alarm:
            t0 = rows[0]["t_abs"]  # the alarm's time is absolute, like the windows of the detector
            ax.plot([alarm["t_end"] - t0], [alarm["rate"] or 0], "rx", markersize=10)
    ax.set_xlabel(f"seconds into the uptime session (windows of {width_s:g} s)")
    ax.set_ylabel("draft acceptance")
    ax.set_ylim(0, 1)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    out.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(out / name, dpi=110)
    plt.close(fig)
    return name


def _phase_cell(phases: list[dict[str, Any]], name: str) -> str:
    p = next((x for x in phases if x.get("phase") == name), None)
    if p is None:
        return "-"
    ref, own = p.get("vs_reference") or {}, p.get("vs_fresh") or {}
    cell = f"{ref.get('corrupted', 0)}/{ref.get('compared', 0)}" if ref else "-"
    if own:
        cell += f" (own fresh {own.get('corrupted', 0)}/{own.get('compared', 0)})"
    return cell


def _pct(v: Any) -> str:
    return f"{v:.1%}" if isinstance(v, int | float) else "-"


def per_position(record: dict[str, Any]) -> str:
    """Acceptance at each draft position over the whole session (the monitor's windows, weighted by drafts)."""
    drafts, sums = 0, list[float]()
    for w in (record.get("monitor") or {}).get("windows") or []:
        n, rates = int(w.get("drafts") or 0), w.get("per_position_rate") or []
        if n <= 0 or not rates:
            continue
        sums = [a + n * float(r) for a, r in zip(sums or [0.0] * len(rates), rates, strict=False)]
        drafts += n
    return " ".join(f"{x / drafts:.2f}" for x in sums) if drafts else "-"


def section(result: Analysis, plots: dict[str, str]) -> list[Block]:
    """Heading, a table of uptime verdicts (probes corrupted per phase, acceptance, alarm), the plot."""
    records = uptime_records(result.run.path)
    if not records:
        return []
    rows = []
    for cohort, r in records.items():
        phases, det = r.get("phases") or [], (r.get("monitor") or {}).get("detector") or {}
        during = [p["phase"] for p in phases if str(p.get("phase", "")).startswith("during")]
        rows.append([
            cohort, str(r.get("verdict")), _phase_cell(phases, "fresh"),
            "; ".join(_phase_cell(phases, d) for d in during) or "-", _phase_cell(phases, "after"),
            _pct(det.get("baseline")), per_position(r), f"{det['max_e_value']:.2g}" if det.get("max_e_value") else "-",
            "yes" if det.get("alarm") else "no",
        ])  # fmt: skip
    header = ["Cohort", "Uptime verdict", "Fresh: corrupted vs reference", "During", "After",
              "Baseline acceptance", "Accepted per draft position", "Max e-value", "Acceptance alarm"]  # fmt: skip
    blocks: list[Block] = [Heading(2, "Uptime: canary phases and acceptance over time"), Table(header, rows)]
    facts = [f"{c}: {r['first_divergence']['text']}" for c, r in records.items() if r.get("first_divergence")]
    if facts:
        blocks.append(Para("First divergence: " + " | ".join(facts)))
    weighed = [(c, evidence(r)) for c, r in records.items() if r.get("verdict") != "clean"]
    if said := [f"{c}: {e[1]}" for c, e in weighed if e is not None]:  # corruption or performance bug, and why
        blocks.append(Para("What the phases say: " + " | ".join(said)))
    if "uptime_acceptance" in plots:
        blocks.append(Image(f"plots/{plots['uptime_acceptance']}", "draft acceptance over time"))
    return blocks


def uptime_acceptance(result: Analysis, out: Path) -> str | None:
    """The report's plot hook (same shape as analysis.plots functions)."""
    return plot_acceptance(result.run.path, out)
