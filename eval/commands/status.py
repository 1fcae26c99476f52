"""CLI command `status`: where a run stands, per cohort (stack state, units, Slurm jobs)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from eval.commands.common import fail


def status(
    run_dir: Annotated[Path, typer.Argument(help="a run directory, e.g. results/slurm-demo")],
    as_json: Annotated[bool, typer.Option("--json", help="print one JSON object")] = False,
) -> None:
    """Per cohort: the stack's state, units done/failed/running, and the Slurm job ids with their states.

    Example: specqual status results/slurm-demo
    """
    from eval.executors.status import run_status

    try:
        cohorts = run_status(run_dir)
    except FileNotFoundError as e:
        fail(str(e))
        return
    if as_json:
        typer.echo(json.dumps({"run": str(run_dir), "cohorts": [c.record() for c in cohorts]}, indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"{run_dir}")
    for col in ("cohort", "stack", "done", "failed", "running", "Slurm jobs"):
        table.add_column(col)
    for c in cohorts:
        jobs = []
        for j in c.jobs:
            tasks = ", ".join(f"{n} {s}" for s, n in j.tasks.items())
            jobs.append(f"{j.kind} {j.job_id}: {j.state}" + (f" ({tasks})" if tasks else "") + ("" if j.live else "*"))
        table.add_row(c.name, c.stack, str(c.done), str(c.failed), str(c.running), "\n".join(jobs) or "-")
    Console().print(table)
    if any(not j.live for c in cohorts for j in c.jobs):
        typer.echo("* as recorded in slurm.json (Slurm does not know the job now, or does not answer)")


def register(app: typer.Typer) -> None:
    app.command("status")(status)
