"""CLI commands of the report stage: `report` and `compare`.

The pipeline never imports the analysis package: both commands run `python -m analysis ...` in a separate
process with the same interpreter and pass its exit code through (0 ok, 1 a cohort tripped --fail-on,
2 bad input).
"""

from __future__ import annotations

import subprocess
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from eval.commands.common import fail


class FailOn(StrEnum):
    FAIL = "FAIL"
    INCONCLUSIVE = "INCONCLUSIVE"


def _require_run(path: Path) -> None:
    if not path.is_dir():
        fail(f"{path}: no such directory (give a run directory, e.g. results/<run_id>)")
    if not (path / "run.json").is_file():
        fail(f"{path}: not a run directory (no run.json); run directories live under results/<run_id>")


def _analysis(args: list[str]) -> int:
    return subprocess.run([sys.executable, "-m", "analysis", *args], check=False).returncode


def report(
    run_dir: Annotated[Path, typer.Argument(help="run directory (results/<run_id>)")],
    fail_on: Annotated[
        FailOn | None,
        typer.Option("--fail-on", help="exit 1 when any cohort is FAIL (or, with INCONCLUSIVE, not PASS)"),
    ] = None,
    out: Annotated[Path | None, typer.Option("--out", help="write the report here, not into the run directory")] = None,
) -> None:
    """Write report.md, report.html (self-contained), summary.json and plots/ for a run, with verdicts.

    Example: specqual report results/pr55178-qualification-20260110 --fail-on FAIL
    """
    _require_run(run_dir)
    args = ["report", str(run_dir)]
    if fail_on is not None:
        args += ["--fail-on", fail_on.value]
    if out is not None:
        args += ["--out", str(out)]
    raise typer.Exit(_analysis(args))


def compare(
    run_a: Annotated[Path, typer.Argument(help="first run directory")],
    run_b: Annotated[Path, typer.Argument(help="second run directory of the same matrix")],
    out: Annotated[Path | None, typer.Option("--out", help="also write the comparison (Markdown) here")] = None,
) -> None:
    """Compare two runs of the same matrix cohort by cohort (accuracy, paired difference, canary, verdicts).

    Example: specqual compare results/run-vllm-0.31 results/run-vllm-0.32
    """
    _require_run(run_a)
    _require_run(run_b)
    args = ["compare", str(run_a), str(run_b)]
    if out is not None:
        args += ["--out", str(out)]
    raise typer.Exit(_analysis(args))


def register(app: typer.Typer) -> None:
    """Add this stage's commands to the app."""
    app.command("report")(report)
    app.command("compare")(compare)
