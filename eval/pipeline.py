"""`specqual run`: every stage a cohort file asks for, cohort by cohort, resumable, ending with the report.

Stages are looked up lazily so that a cohort file without a SWE-bench workload never imports the agent.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from rich.console import Console

from eval.plan import model_path_for_plan
from eval.spec.load import LoadedSpec
from eval.stacks.commands import cohort_commands
from eval.store.run import RunDir, now, open_run


def run_pipeline(loaded: LoadedSpec, results: Path, run_id: str | None, report: bool = True) -> int:
    """Run (or resume) the whole matrix; return the process exit code."""
    console = Console(stderr=True)
    run = open_run(loaded, results, run_id)
    console.print(f"run directory: {run.path}")
    for cohort in loaded.cohorts:
        cmds = [p.shell() for p in cohort_commands(loaded.spec, cohort, model_path_for_plan(loaded))]
        run.write_cohort(loaded, cohort, cmds)
    run.mark(ended_at=now())
    if report:
        return write_report(run, console)
    return 0


def write_report(run: RunDir, console: Console) -> int:
    """The report is built by the analysis package in its own process: eval never imports analysis."""
    proc = subprocess.run([sys.executable, "-m", "analysis", "report", str(run.path)], check=False)
    if proc.returncode != 0:
        console.print(f"[red]report failed (exit {proc.returncode})[/red]")
    return proc.returncode
