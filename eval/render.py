"""Terminal rendering of plans (rich); no pipeline logic here."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table


def print_plan(plan: dict[str, Any], console: Console | None = None) -> None:
    console = console or Console()
    table = Table(title=f"{plan['name']}  (executor: {plan['executor']}, hash {plan['spec_hash'][:12]})")
    for col in ("cohort", "label", "factors", "model", "workloads", "control", "units", "probes", "GPUs"):
        table.add_column(col)
    for c in plan["cohorts"]:
        units = "?" if c["units"] is None else f"{c['units']:,} ({c['instances']} x {c['repeats']})"
        if c["repeats"] == 0:
            units = "-"
        factors = ", ".join(f"{k}={v}" for k, v in c["factors"].items())
        workloads = ", ".join(c.get("workloads") or []) or "-"
        table.add_row(
            c["name"],
            c["label"],
            factors,
            c.get("model") or "default",
            workloads,
            c["control"] or "-",
            units,
            str(c["probes"] or "-"),
            str(c["gpus"]),
        )
    console.print(table)
    total = "?" if plan["total_units"] is None else f"{plan['total_units']:,}"
    console.print(f"{len(plan['cohorts'])} cohorts, {total} units, {plan['total_gpus']} GPUs in all\n")
    _print_cost(plan, console)
    for c in plan["cohorts"]:
        console.print(f"[bold]{c['name']}[/bold]")
        for cmd in c["commands"]:
            console.print(f"  {cmd}", markup=False, soft_wrap=True)
    for c in plan["cohorts"]:
        for script in c.get("sbatch", []):
            console.print(f"[bold]{c['name']}: sbatch script[/bold]")
            console.print(script, markup=False, soft_wrap=True)


def _print_cost(plan: dict[str, Any], console: Console) -> None:
    """Expected instances and GPU-hours to each comparison's verdict (eval.plan.comparison_cost)."""
    rows = plan.get("cost") or []
    if not rows:
        return
    a = plan.get("cost_assumptions") or {}
    table = Table(
        title=f"Cost of a verdict (control rate {a.get('rate')}, ICC {a.get('icc')}, {a.get('unit_seconds')} s per "
        "unit; the sequential test stops the compared cohort; its control runs every unit)"
    )
    for col in ("cohort", "scenario", "P(PASS)", "P(FAIL)", "P(INCONCL.)", "median instances", "GPU-h", "GPU-h all"):
        table.add_column(col)
    for r in rows:
        table.add_row(
            r["cohort"], r["scenario"], f"{r['p_pass']:.0%}", f"{r['p_fail']:.0%}", f"{r['p_inconclusive']:.0%}",
            f"{r['median_instances']:.0f}", f"{r['gpu_hours']:,.1f}", f"{r['gpu_hours_full']:,.1f}",
        )  # fmt: skip
    console.print(table)
