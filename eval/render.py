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
    for c in plan["cohorts"]:
        console.print(f"[bold]{c['name']}[/bold]")
        for cmd in c["commands"]:
            console.print(f"  {cmd}", markup=False, soft_wrap=True)
    for c in plan["cohorts"]:
        for script in c.get("sbatch", []):
            console.print(f"[bold]{c['name']}: sbatch script[/bold]")
            console.print(script, markup=False, soft_wrap=True)
