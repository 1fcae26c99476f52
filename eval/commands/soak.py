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
    parallel: Annotated[
        int, typer.Option(min=1, max=4, help="stacks soaked at once (each its own server; comparisons at the end)")
    ] = 1,
) -> None:
    """Soak each cohort of `workloads.soak` on its own fresh server: canary phases when fresh, during and after a
    bounded, seeded agent-like load (shared prefixes, long and short, aborts, cache pressure), compared with the
    reference's fresh phase and the cohort's own; acceptance per window from /metrics with a change detector.
    Writes `<run>/<cohort>/uptime.json`; exit code 1 when a soaked cohort is not clean.

    Example: specqual soak cohorts/soak-cpu.yaml --run-id soak
    Example: specqual soak cohorts/soak-cpu-bf16.yaml --cohort fixed-mtp5
    Example: specqual soak cohorts/soak-cpu.yaml benchmarks/uptime/campaign-cpu.yaml --parallel 3 --run-id soak-fp32
    """
    from rich.console import Console

    from eval.executors import pick, stacks
    from eval.pipeline import model_paths, write_cohorts
    from eval.stages import serve_each
    from eval.store.run import now, open_run
    from eval.uptime.session import soak_cohort, soak_config, soak_order, summarize

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

    order, factory = soak_order(loaded, cohort), stacks(pick(loaded), loaded, run.path, models)
    if parallel == 1:
        serve_each(order, factory, work, start_failed)
    else:
        _in_parallel(order, factory, work, start_failed, parallel)
        for c in order:  # the reference may have finished after the others: compare again with it on disk
            if results_by_cohort.get(c.name, {}).get("verdict") != "failed":
                results_by_cohort[c.name] = summarize(loaded, run, c.name)
    run.mark(ended_at=now())
    for name, res in results_by_cohort.items():
        typer.echo(f"{name}: {res['verdict']}")
        for reason in res.get("reasons", []):
            typer.echo(f"  - {reason}")
    typer.echo(f"uptime summaries: {run.path}/<cohort>/uptime.json")
    bad = [n for n, r in results_by_cohort.items() if r["verdict"] not in ("clean", "reference")]
    raise typer.Exit(1 if bad else 0)


def _in_parallel(order: list[Any], factory: Any, work: Any, start_failed: Any, parallel: int) -> None:
    """Each cohort on its own stack, `parallel` stacks at a time (a stack that fails to start is recorded)."""
    from concurrent.futures import ThreadPoolExecutor

    def one(c: Any) -> None:
        try:
            cm = factory(c)
            stack = cm.__enter__()
        except Exception as e:  # any launch failure is this cohort's infra failure
            start_failed(c, f"stack failed to start: {type(e).__name__}: {e}")
            return
        try:
            work(c, stack)
        finally:
            cm.__exit__(None, None, None)

    with ThreadPoolExecutor(max_workers=parallel, thread_name_prefix="soak") as pool:
        for future in [pool.submit(one, c) for c in order]:
            future.result()
