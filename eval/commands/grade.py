"""CLI commands of the grade stage: re-grade a saved run; validate a dataset's gold patches."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from eval.commands.common import fail, spec_errors

if TYPE_CHECKING:
    from eval.grading.validate import InstanceCheck
    from eval.protocols import Grader
    from eval.spec.models import GraderSpec


def register(app: typer.Typer) -> None:
    app.command("grade")(grade)
    app.command("validate-gold")(validate_gold)


@spec_errors
def grade(
    run_dir: Annotated[Path, typer.Argument(help="a run directory (holds run.json)")],
    regrade: Annotated[bool, typer.Option("--regrade", help="grade every unit again, not only ungraded ones")] = False,
    workers: Annotated[int | None, typer.Option(help="parallel graders (default: the cohort file's)")] = None,
) -> None:
    """Grade the saved patches of a run with the SWE-bench harness; no model runs.

    Example: specqual grade results/demo-cpu-20261202-170000 --regrade
    """
    from eval.grading.rerun import grade_run

    if not (run_dir / "run.json").is_file():
        fail(f"{run_dir}: no run.json (not a run directory)")
    counts = grade_run(run_dir, regrade=regrade, workers=workers)
    typer.echo(" ".join(f"{k}={v}" for k, v in sorted(counts.items())) or "no units")


@spec_errors
def validate_gold(
    dataset: Annotated[str, typer.Argument(help="local task set dir, .jsonl/.parquet copy, or hub dataset name")],
    out: Annotated[Path, typer.Option("--out", help="exclusion list to write")] = Path("exclusions.txt"),
    runs: Annotated[int, typer.Option(min=1, help="times each patch is graded")] = 3,
    grader: Annotated[str, typer.Option(help="local (bwrap), docker or modal")] = "local",
    split: Annotated[str, typer.Option(help="dataset split")] = "test",
    filter_: Annotated[str | None, typer.Option("--filter", help="regular expression on instance_id")] = None,
    limit: Annotated[int | None, typer.Option(min=1, help="first N instances")] = None,
    workers: Annotated[int, typer.Option(min=1, help="parallel gradings")] = 2,
    timeout_s: Annotated[float, typer.Option(help="test time limit per grading")] = 1800,
    version: Annotated[str | None, typer.Option(help="version label of the list (default: today)")] = None,
) -> None:
    """Grade every instance's gold patch and an empty patch N times; write an exclusion list with reasons.

    Example: specqual validate-gold specqual/local --runs 3 --out cohorts/exclusions-local.txt
    """
    from eval.grading.validate import validate
    from eval.spec.models import GraderSpec, SWEBenchWorkload
    from eval.store.atomic import atomic_write_text
    from eval.tasks import exclusions
    from eval.tasks.load import load_tasks
    from store.record_io import write_record
    from store.unit_records import GoldValidation

    if grader not in ("local", "docker", "modal"):
        fail(f"--grader: unknown grader {grader!r} (known: docker, local, modal)")
    is_path = Path(dataset).exists()
    workload = SWEBenchWorkload(
        dataset=dataset if not is_path else "specqual/local" if _is_set(dataset) else "local",
        path=str(Path(dataset).resolve()) if is_path else None,
        split=split,
        filter=filter_,
        limit=limit,
    )
    tasks = load_tasks(workload, Path.cwd())
    work = out.parent / f"{out.stem}.logs"
    spec = GraderSpec.model_validate({"kind": grader, "timeout_s": timeout_s})
    gold, empty = _graders(spec, work)
    typer.echo(f"validating {len(tasks)} instances x {runs} runs (gold + empty patch) with the {grader} grader")
    checks = validate(tasks, gold, empty, runs, work, workers, progress=_show)
    reasons = {c.instance_id: "; ".join(c.reasons()) for c in checks if c.reasons()}
    label = version or datetime.now(UTC).strftime("%Y-%m-%d")
    atomic_write_text(out, exclusions.render(label, reasons))
    record = GoldValidation(dataset=dataset, runs=runs, instances=[c.summary() for c in checks])
    write_record(work / "validate-gold.json", record)
    typer.echo(f"{len(reasons)}/{len(checks)} instances excluded -> {out}")


def _is_set(dataset: str) -> bool:
    from eval.tasks.local_set import is_local_set

    return is_local_set(Path(dataset))


def _graders(spec: GraderSpec, work: Path) -> tuple[Grader, Grader]:
    from eval.grading.factory import make_grader

    gold = make_grader(spec, log_root=work / "harness-logs")
    empty = make_grader(spec, log_root=work / "harness-logs", run_empty=True)
    return gold, empty


def _show(check: InstanceCheck) -> None:
    summary = check.summary()
    verdict = "; ".join(summary.reasons) or "ok"
    typer.echo(f"  {summary.instance_id}: gold {summary.gold} empty {summary.empty} -> {verdict}")
