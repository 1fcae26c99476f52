"""`specqual`: one typer app whose subcommands are the pipeline's stages.

Heavy imports live inside the commands so that `specqual --help` is instant. Every cohort-file error is one
line on stderr naming the file and the field, with exit code 2, before anything starts.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from eval.commands import register_all
from eval.commands.common import ConfigArg, ConfigOpt, load, spec_errors

app = typer.Typer(
    name="specqual",
    help=(
        "Qualify a vLLM serving stack: did speculative decoding silently damage what the model says?\n\n"
        "Example: specqual plan cohorts/pr55178-qualification.yaml"
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.command()
@spec_errors
def validate(files: ConfigArg, config: ConfigOpt = None) -> None:
    """Validate cohort files and overrides; print the cohorts. Example: specqual validate cohorts/demo-cpu.yaml"""
    loaded = load(files, config)
    typer.echo(f"ok: {loaded.spec.name}: {len(loaded.cohorts)} cohorts ({', '.join(c.name for c in loaded.cohorts)})")


@app.command()
@spec_errors
def plan(
    files: ConfigArg,
    config: ConfigOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="print one JSON object")] = False,
    rate: Annotated[float, typer.Option(help="expected control resolve rate, for the cost of a verdict")] = 0.3867,
    icc: Annotated[float, typer.Option(help="expected ICC between repeats, for the cost of a verdict")] = 0.35,
    unit_seconds: Annotated[float, typer.Option(help="wall seconds of one SWE-bench unit")] = 600.0,
) -> None:
    """Print the expanded matrix, units, GPUs, launch commands and the expected cost of each comparison's
    verdict (instances and GPU-hours for no effect, a drop equal to the margin and the seed's effect); start
    nothing.

    Example: specqual plan cohorts/pr55178-qualification.yaml -c workloads.swebench.repeats=1
    """
    from eval.executors import pick
    from eval.plan import build_plan, comparison_cost

    loaded = load(files, config)
    result = build_plan(loaded, pick(loaded))
    result["cost"] = comparison_cost(loaded, result, rate, icc, unit_seconds)
    result["cost_assumptions"] = {"rate": rate, "icc": icc, "unit_seconds": unit_seconds}
    if as_json:
        typer.echo(json.dumps(result, indent=2))
        return
    from eval.render import print_plan

    print_plan(result)


@app.command()
@spec_errors
def run(
    files: ConfigArg,
    config: ConfigOpt = None,
    results: Annotated[Path, typer.Option(help="results root")] = Path("results"),
    run_id: Annotated[str | None, typer.Option(help="resume or name a run")] = None,
    report: Annotated[bool, typer.Option(help="write the report at the end")] = True,
    early_stop: Annotated[
        bool, typer.Option(help="stop a cohort's rollouts once its comparison is decided (policy.early_stop)")
    ] = True,
    cohort: Annotated[
        list[str] | None, typer.Option(help="run only this cohort (repeatable); the canary needs its reference")
    ] = None,
) -> None:
    """Run every stage the cohort file asks for, then the report. Re-run with --run-id to resume.
    `-c executor.concurrent_stacks=N` starts and serves N cohorts' stacks at once (a GPU per stack).

    Example: specqual run cohorts/demo-cpu.yaml --run-id demo
    """
    from eval.pipeline import run_pipeline

    loaded = load(files, config)
    code = run_pipeline(loaded, results, run_id, report=report, early_stop=early_stop, cohorts=cohort)
    raise typer.Exit(code)


register_all(app)


def main() -> None:
    app(prog_name="specqual")


if __name__ == "__main__":
    main()
