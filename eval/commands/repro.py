"""CLI command `specqual repro RUN_DIR COHORT`: a failing cohort's canary evidence -> a standalone reproducer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from eval.commands.common import fail


def register(app: typer.Typer) -> None:
    app.command()(repro)


def repro(
    run_dir: Annotated[Path, typer.Argument(help="a run directory (results/<run id>)")],
    cohort: Annotated[str, typer.Argument(help="the failing cohort")],
    cohort_url: Annotated[str | None, typer.Option(help="the cohort's running server (with --reference-url)")] = None,
    reference_url: Annotated[str | None, typer.Option(help="its reference's running server")] = None,
    start: Annotated[
        bool, typer.Option(help="start both stacks from the run's cohort file to confirm and shrink")
    ] = False,
    case: Annotated[
        str | None, typer.Option(help="the failing group to use (fuzz-007, fresh-000); default: smallest")
    ] = None,
    max_checks: Annotated[int, typer.Option(help="runs on both servers that shrinking may spend")] = 30,
    repeats: Annotated[int, typer.Option(help="runs of the minimal case to say how often it reproduces")] = 3,
) -> None:
    """Write RUN_DIR/COHORT/repro/ (repro.py: Python + httpx only, exits 1 when the bug shows; REPORT.md: an
    upstream-style issue; case.json). With servers (--cohort-url and --reference-url, or --start) the failing
    case is confirmed, shrunk to a minimal one and repeated; without, the recorded requests are replayed as they are.
    Prints the directory last.

    Example: specqual repro results/demo fixed-reverted-mtp5
    Example: specqual repro results/zoo pr19482-self4 --cohort-url http://127.0.0.1:21001 --reference-url http://127.0.0.1:21002
    """
    from eval.canary.repro.run import Live, make_repro

    meta = _run_meta(run_dir)
    model = str(((meta.get("spec") or {}).get("model") or {}).get("served_name") or "model")
    if (cohort_url is None) != (reference_url is None):
        fail("--cohort-url and --reference-url go together (the server under test and its reference)")
    try:
        if start:
            made = _with_stacks(run_dir, cohort, meta, model, case, max_checks, repeats)
        else:
            live = Live(cohort_url, reference_url, model) if cohort_url and reference_url else None
            made = make_repro(run_dir, cohort, facts(meta, cohort), model, live, case, max_checks, repeats)
    except LookupError as e:
        fail(str(e))
    typer.echo(f"{made.requests} request(s) (from {made.shrunk_from}); {made.rate}")
    typer.echo(str(made.path))


def _run_meta(run_dir: Path) -> dict[str, Any]:
    path = Path(run_dir) / "run.json"
    if not path.is_file():
        fail(f"{run_dir}: no run.json (not a run directory)")
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def facts(meta: dict[str, Any], cohort: str) -> dict[str, Any]:
    """Environment lines of the report: versions, host, dtype, the cohort's build and speculation."""
    spec = meta.get("spec") or {}
    model = spec.get("model") or {}
    cohort_row: dict[str, Any] = next(
        (c for c in (spec.get("matrix") or {}).get("cohorts") or [] if c.get("name") == cohort), {}
    )
    build = (spec.get("builds") or {}).get(cohort_row.get("build"), {})
    spec_cfg = (spec.get("speculative") or {}).get(cohort_row.get("speculative"), {})
    patches = ", ".join(("reversed " if p.get("reverse") else "") + p["file"] for p in build.get("patches") or [])
    return {
        "vLLM": f"{build.get('pip') or build.get('wheel') or build.get('env')} ({build.get('label', '')})",
        "patches": patches or "none",
        "speculative decoding": json.dumps({k: v for k, v in spec_cfg.items() if k != "label" and v is not None}),
        "model": f"{model.get('served_name')} ({model.get('generate') or model.get('path')})",
        "dtype": model.get("dtype"),
        "server args": json.dumps((spec.get("server") or {}).get("args") or {}),
        "host": json.dumps(meta.get("host")),
        "tool versions": json.dumps(meta.get("versions")),
    }


def _with_stacks(
    run_dir: Path, cohort: str, meta: dict[str, Any], model: str, case: str | None, max_checks: int, repeats: int
) -> Any:
    """Start the cohort's and its reference's stacks from the run's cohort file (sources + -c overrides)."""
    from contextlib import ExitStack

    from eval.canary.repro.evidence import find
    from eval.canary.repro.run import Live, make_repro
    from eval.executors import pick, stacks
    from eval.pipeline import model_path
    from eval.spec.load import load_spec

    argv = [str(a) for a in meta.get("argv") or []]
    overrides = [argv[i + 1] for i, a in enumerate(argv[:-1]) if a in ("-c", "--config")]
    loaded = load_spec([*(meta.get("sources") or []), *overrides])
    reference = find(run_dir, cohort, case).reference
    from rich.console import Console

    mpath = model_path(loaded, Console(stderr=True), loaded.cohort(cohort).model_name)
    factory = stacks(pick(loaded), loaded, Path(run_dir) / cohort / "repro" / "stacks", mpath)
    with ExitStack() as es:
        mine = es.enter_context(factory(loaded.cohort(cohort)))
        ref = es.enter_context(factory(loaded.cohort(reference)))
        live = Live(mine.base_url, ref.base_url, model)
        return make_repro(run_dir, cohort, facts(meta, cohort), model, live, case, max_checks, repeats)
