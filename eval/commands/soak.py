"""CLI command of the uptime soak: `specqual soak COHORT_FILE` (eval/uptime, docs/trust/uptime.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from eval.commands.common import ConfigArg, ConfigOpt, load, spec_errors


def register(app: typer.Typer) -> None:
    app.command()(soak)


@spec_errors
def soak(
    files: ConfigArg,
    config: ConfigOpt = None,
    cohort: Annotated[list[str] | None, typer.Option("--cohort", help="only these soak cohorts (repeatable)")] = None,
    results: Annotated[Path, typer.Option(help="results root")] = Path("results"),
    run_id: Annotated[str | None, typer.Option(help="name the run")] = None,
) -> None:
    """Soak each cohort of `workloads.soak` on its own fresh server: canary phases when fresh, during and after a
    bounded, seeded agent-like load (shared prefixes, long and short, aborts, cache pressure), compared with the
    reference's fresh phase and the cohort's own; acceptance per window from /metrics with a change detector.
    Writes `<run>/<cohort>/uptime.json`; exit code 1 when a soaked cohort is not clean.

    Example: specqual soak cohorts/soak-cpu.yaml --run-id soak
    Example: specqual soak cohorts/soak-cpu.yaml -c model.dtype=bfloat16 --cohort fixed-mtp5
    """
    from rich.console import Console

    from eval.executors import pick, stacks
    from eval.pipeline import model_paths, write_cohorts
    from eval.stages import serve_each
    from eval.store.run import now, open_run
    from eval.uptime.session import soak_cohort, soak_config, soak_order

    loaded = load(files, config)
    cfg = soak_config(loaded)
    console = Console(stderr=True)
    run = open_run(loaded, results, run_id)
    models = model_paths(loaded, console)
    write_cohorts(loaded, run, models)
    results_by_cohort: dict[str, dict[str, Any]] = {}

    def work(c: Any, stack: Any) -> None:
        console.print(f"{c.name}: {'fresh phase (reference)' if c.name == cfg.reference else 'soaking'}")
        results_by_cohort[c.name] = soak_cohort(loaded, run, c, stack, phases_only=c.name == cfg.reference)
        console.print(f"{c.name}: {results_by_cohort[c.name]['verdict']}")

    def start_failed(c: Any, reason: str) -> None:
        results_by_cohort[c.name] = {"verdict": "failed", "reasons": [reason]}
        console.print(f"{c.name}: {reason}")

    serve_each(soak_order(loaded, cohort), stacks(pick(loaded), loaded, run.path, models), work, start_failed)
    run.mark(ended_at=now())
    for name, res in results_by_cohort.items():
        typer.echo(f"{name}: {res['verdict']}")
        for reason in res.get("reasons", []):
            typer.echo(f"  - {reason}")
    typer.echo(f"uptime summaries: {run.path}/<cohort>/uptime.json")
    bad = [n for n, r in results_by_cohort.items() if r["verdict"] not in ("clean", "reference")]
    raise typer.Exit(1 if bad else 0)
