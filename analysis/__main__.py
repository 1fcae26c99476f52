"""`python -m analysis`: the analysis's own small CLI, run by `specqual report` / `specqual compare` in a
separate process (the pipeline never imports the analysis).

Exit codes: 0 ok; 1 a cohort tripped --fail-on; 2 bad input (not a run directory, unknown option value).
"""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(name="analysis", add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False)


class FailOn(StrEnum):
    FAIL = "FAIL"
    INCONCLUSIVE = "INCONCLUSIVE"


def _bad(message: str) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(2)


@app.command()
def report(
    run_dir: Annotated[Path, typer.Argument(help="a run directory (holds run.json)")],
    fail_on: Annotated[FailOn | None, typer.Option("--fail-on", help="exit 1 when a cohort is FAIL (or worse)")] = None,
    out: Annotated[Path | None, typer.Option("--out", help="write the report here instead of RUN_DIR")] = None,
) -> None:
    """Write report.md, report.html, summary.json and plots/. Example: python -m analysis report results/demo"""
    from analysis.load import NotARunError
    from analysis.report import gate, write_report

    try:
        result, files = write_report(run_dir, out)
    except NotARunError as e:
        _bad(str(e))
        return
    for name, s in result.summaries.items():
        typer.echo(f"{s.verdict:<12} {name}: {s.reason}")
    typer.echo(f"report: {files.markdown}  {files.html}  {files.summary}")
    tripped = gate(result, fail_on.value if fail_on else None)
    if tripped:
        typer.echo(f"--fail-on {fail_on.value if fail_on else ''}: {', '.join(tripped)}", err=True)
        raise typer.Exit(1)


@app.command()
def compare(
    run_a: Annotated[Path, typer.Argument(help="first run directory")],
    run_b: Annotated[Path, typer.Argument(help="second run directory (same matrix)")],
    out: Annotated[Path | None, typer.Option("--out", help="also write the comparison as Markdown here")] = None,
) -> None:
    """Compare two runs of the same matrix cohort by cohort. Example: python -m analysis compare results/a results/b"""
    from analysis.compare_runs import MatrixMismatchError, compare_runs
    from analysis.load import NotARunError

    try:
        text = compare_runs(run_a, run_b)
    except (NotARunError, MatrixMismatchError) as e:
        _bad(str(e))
        return
    typer.echo(text)
    if out is not None:
        from store.atomic import atomic_write_text

        atomic_write_text(out, text)


@app.command()
def decide(
    run_dir: Annotated[Path, typer.Argument(help="a run directory (holds run.json); may still be running")],
    as_json: Annotated[bool, typer.Option("--json", help="print the decisions as JSON")] = False,
) -> None:
    """Which comparisons the sequential test has decided on finished instances.

    Example: python -m analysis decide results/my-run --json
    """
    import json

    from analysis.decide import decisions
    from analysis.load import NotARunError, load_run

    try:
        result = decisions(load_run(run_dir))
    except NotARunError as e:
        _bad(str(e))
        return
    if as_json:
        typer.echo(json.dumps(result.model_dump(mode="json"), indent=1))
        return
    for name, c in result.comparisons.items():
        at = f" at instance {c.decided_at}" if c.decided_at else ""
        typer.echo(f"{c.decision:<12} {name} vs {c.control}{at} ({c.prefix} of {c.planned} complete)")


@app.command("plan-cost")
def plan_cost(
    rate: Annotated[float, typer.Option(help="the control's expected resolve rate")] = 0.3867,
    icc: Annotated[float, typer.Option(help="ICC between repeats of an instance")] = 0.35,
    repeats: Annotated[int, typer.Option(help="repeats per instance and cohort")] = 3,
    margin: Annotated[float, typer.Option(help="non_inferiority_margin")] = 0.03,
    alpha: Annotated[float, typer.Option(help="alpha of each one-sided test")] = 0.05,
    cap: Annotated[int, typer.Option(help="instances available (the run's size)")] = 500,
    paths: Annotated[int, typer.Option(help="simulated runs per scenario")] = 1000,
    as_json: Annotated[bool, typer.Option("--json", help="print JSON")] = False,
) -> None:
    """Expected instances to a verdict for no effect, a drop equal to the margin and the seed's effect."""
    import json

    from analysis.planning import plan, scenarios
    from store.decisions import PlanCost

    rows = {
        name: plan(margin, alpha, rate, drop, icc, repeats, cap=cap, paths=paths).as_dict()
        for name, drop in scenarios(margin, rate).items()
    }
    if as_json:
        cost = PlanCost.model_validate(
            {"rate": rate, "icc": icc, "repeats": repeats, "margin": margin, "alpha": alpha, "cap": cap}
            | {"scenarios": rows}
        )
        typer.echo(json.dumps(cost.model_dump(mode="json"), indent=1))
        return
    for name, r in rows.items():
        typer.echo(
            f"{name:<42} median {r['median_instances']:>5.0f} instances (p90 {r['p90_instances']:.0f}); "
            f"P(PASS) {r['p_pass']:.0%}, P(FAIL) {r['p_fail']:.0%}, P(INCONCLUSIVE at {cap}) {r['p_inconclusive']:.0%}"
        )


if __name__ == "__main__":
    sys.exit(app(prog_name="python -m analysis"))
