"""CLI commands of the probe stage: `specqual probe` runs the canary on the matrix, some cohorts, or one URL."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from eval.commands.common import ConfigArg, ConfigOpt, fail, load, spec_errors


def register(app: typer.Typer) -> None:
    app.command()(probe)


@spec_errors
def probe(
    files: ConfigArg,
    config: ConfigOpt = None,
    cohort: Annotated[list[str] | None, typer.Option("--cohort", help="only these cohorts (repeatable)")] = None,
    base_url: Annotated[
        str | None, typer.Option(help="probe this running server as --cohort instead of launching it")
    ] = None,
    results: Annotated[Path, typer.Option(help="results root")] = Path("results"),
    run_id: Annotated[str | None, typer.Option(help="resume or name a run")] = None,
) -> None:
    """Run the canary probe (PR 55178 trigger: prefix hit leaving one prompt token, concurrent streaming request,
    fresh prompts, tool-call A/B/A) and compare every request token by token with its reference cohort.

    Example: specqual probe cohorts/demo-cpu.yaml --run-id demo
    Example: specqual probe cohorts/demo-cpu.yaml --cohort fixed-reverted-mtp5 --base-url http://127.0.0.1:8000
    """
    from rich.console import Console

    from eval.canary.results import reference_cohort
    from eval.canary.run import canary_config, run_canary
    from eval.canary.table import print_table
    from eval.executors import pick, stacks
    from eval.pipeline import model_path, model_paths, write_cohorts
    from eval.store.run import now, open_run

    loaded = load(files, config)
    canary_config(loaded)
    for name in cohort or []:
        if not loaded.cohort(name).runs("canary"):
            fail(f"--cohort: {name} does not run the canary (it runs: {', '.join(loaded.cohort(name).workloads)})")
    if base_url is not None and len(cohort or []) != 1:
        fail("--base-url needs exactly one --cohort (the cohort whose stack answers at that URL)")
    console = Console(stderr=True)
    run = open_run(loaded, results, run_id)
    model = model_path(loaded, console, loaded.cohort(reference_cohort(loaded)).model_name)  # every canary cohort's
    write_cohorts(loaded, run, model_paths(loaded))
    if base_url is not None:
        summaries = _probe_url(loaded, run, model, (cohort or [""])[0], base_url, console)
    else:
        factory = stacks(pick(loaded), loaded, run.path, model)  # on the executor the file names
        summaries = run_canary(loaded, run, model, stacks_factory=factory, console=console, cohorts=cohort)
    run.mark(ended_at=now())
    print_table(summaries, {c.name: c.label for c in loaded.cohorts}, Console())
    typer.echo(f"probe records: {run.path}/<cohort>/probes/  summaries: {run.path}/<cohort>/canary.json")


def _probe_url(loaded: Any, run: Any, model: Path, cohort: str, base_url: str, console: Any) -> dict[str, Any]:
    from eval.canary.progress import CanaryProgress
    from eval.canary.results import compare_and_summarize
    from eval.canary.run import canary_config, make_book, probe_endpoint, total

    cfg = canary_config(loaded)
    book = make_book(cfg, model, base_url, loaded.cohort(cohort).model.served_name)
    with CanaryProgress(console, [cohort], total(cfg)) as progress:
        progress.status(cohort, "probing")
        probe_endpoint(loaded, cohort, base_url.rstrip("/"), run.cohort_dir(cohort), book, progress)
    return compare_and_summarize(loaded, run, {})
