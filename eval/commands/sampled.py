"""CLI command of the canary's sampled mode: `specqual sampled` (issue 28, eval/canary/sampled)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from eval.commands.common import ConfigArg, ConfigOpt, load, spec_errors


def register(app: typer.Typer) -> None:
    app.command()(sampled)


@spec_errors
def sampled(
    files: ConfigArg,
    config: ConfigOpt = None,
    cohort: Annotated[list[str] | None, typer.Option("--cohort", help="only these cohorts (repeatable)")] = None,
    results: Annotated[Path, typer.Option(help="results root")] = Path("results"),
    run_id: Annotated[str | None, typer.Option(help="name the run")] = None,
) -> None:
    """Sampled mode of the canary: seeded draws at temperature > 0 on each cohort, every token tested against the
    reference stack's exact distribution (anytime-valid e-process; FAIL / PASS / INCONCLUSIVE per cohort).

    Example: specqual sampled cohorts/bugzoo-sampled-cpu.yaml --cohort pr10198-self4
    Example: specqual sampled cohorts/bugzoo-sampled-cpu.yaml -c workloads.sampled.seed=3 -c model.dtype=bfloat16
    """
    from rich.console import Console

    from eval.canary.sampled.run import run_sampled, sampled_config
    from eval.executors import pick, stacks
    from eval.pipeline import model_path, write_cohorts
    from eval.store.run import now, open_run

    loaded = load(files, config)
    cfg = sampled_config(loaded)
    for name in cohort or []:
        loaded.cohort(name)
    console = Console(stderr=True)
    run = open_run(loaded, results, run_id)
    model = model_path(loaded, console, loaded.cohort(cfg.reference).model_name)
    write_cohorts(loaded, run, model)
    factory = stacks(pick(loaded), loaded, run.path, model)
    summaries = run_sampled(loaded, run, model, stacks_factory=factory, cohorts=cohort, report=console.print)
    run.mark(ended_at=now())
    for s in summaries.values():
        typer.echo(f"{s['cohort']}\tseed {s.get('seed')}\t{s['verdict']}")
    typer.echo(f"draws and verdicts: {run.path}/<cohort>/sampled/seed<k>/{{draws.jsonl,sampled.json}}")
