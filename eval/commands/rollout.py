"""CLI commands of the rollout stage: `rollout` (one cohort against a running server) and `import` (other
agents' trajectories into a specqual run directory)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

import typer

from eval.commands.common import ConfigArg, ConfigOpt, fail, load, spec_errors

ImportFormat = Literal["mini-swe-agent", "openhands"]


@spec_errors
def rollout(
    files: ConfigArg,
    cohort: Annotated[str, typer.Option("--cohort", help="the cohort whose server is running")],
    base_url: Annotated[str, typer.Option("--base-url", help="the server, e.g. http://127.0.0.1:8000")],
    config: ConfigOpt = None,
    run_id: Annotated[str | None, typer.Option(help="resume or name a run")] = None,
    results: Annotated[Path, typer.Option(help="results root")] = Path("results"),
    grade: Annotated[bool, typer.Option(help="grade each unit as it finishes (workloads.swebench.grader)")] = False,
) -> None:
    """Run one cohort's SWE-bench rollouts against an already running server; resumable (same --run-id).

    Example: specqual rollout cohorts/demo-cpu.yaml --cohort fixed-off --base-url http://127.0.0.1:8000 --run-id demo
    """
    import asyncio

    from eval.plan import model_path_for_plan
    from eval.rollout.progress import RolloutProgress
    from eval.rollout.run import check_workload, run_rollouts
    from eval.stacks.commands import cohort_commands
    from eval.store.run import open_run
    from eval.tasks.load import load_tasks

    loaded = load(files, config)
    target = loaded.cohort(cohort)
    workload = check_workload(loaded)
    if not target.runs("swebench"):
        fail(f"--cohort: {target.name} does not run the swebench workload (it runs: {', '.join(target.workloads)})")
    tasks = load_tasks(workload, loaded.spec.base_dir)
    if not tasks:
        fail("the SWE-bench workload selects no instances")
    run = open_run(loaded, results, run_id)
    if not (run.cohort_dir(target.name) / "cohort.json").exists():
        cmds = [p.shell() for p in cohort_commands(loaded.spec, target, model_path_for_plan(loaded, target))]
        run.write_cohort(loaded, target, cmds)
    typer.echo(f"run directory: {run.path}", err=True)
    with RolloutProgress() as view:
        if grade:
            summary, graded = grade_while_running(loaded, run, target, base_url, tasks, view)
        else:
            summary = asyncio.run(run_rollouts(loaded, run, target, base_url, tasks, progress=view))
    if grade:
        typer.echo(f"{summary.cohort}: graded {graded}")
    typer.echo(
        f"{summary.cohort}: {summary.total} units, {summary.skipped} already done, {summary.completed} completed, "
        f"{summary.infra_errors} infra errors, {summary.turns} turns in {summary.wall_s:.1f} s; "
        f"predictions: {summary.predictions}"
    )
    if summary.server_lost:
        typer.echo(f"{summary.cohort}: server lost ({summary.server_lost}): the units left are infra errors")


def grade_while_running(loaded: Any, run: Any, cohort: Any, base_url: str, tasks: list[Any], view: Any) -> Any:
    """Rollouts with a grading queue fed as units finish; returns (summary, counts of grade statuses)."""
    import asyncio
    from collections import Counter

    from eval.grading.factory import make_grader
    from eval.grading.stream import GradeQueue
    from eval.rollout.run import grade_when_done, run_rollouts

    spec = loaded.spec.workloads.swebench.grader
    grader = make_grader(spec, log_root=run.cohort_dir(cohort.name) / "harness")
    with GradeQueue(grader, spec.kind, workers=spec.workers) as queue:
        # units finished by an earlier, killed run may not be graded yet (already graded ones are skipped)
        for repeat in range(loaded.spec.workloads.swebench.repeats):
            for task in tasks:
                if run.unit_done(cohort.name, task.instance_id, repeat):
                    queue.submit(task, run.unit_dir(cohort.name, task.instance_id, repeat))
        done = grade_when_done(queue.submit, tasks)
        summary = asyncio.run(run_rollouts(loaded, run, cohort, base_url, tasks, progress=view, on_unit_done=done))
        results = queue.close()
    counts = Counter(r.status for r in results if r is not None)
    return summary, ", ".join(f"{n} {status}" for status, n in sorted(counts.items())) or "nothing new"


def import_(
    src: Annotated[Path, typer.Argument(help="a trajectory file or a directory of them")],
    fmt: Annotated[ImportFormat, typer.Option("--format", help="mini-swe-agent (*.traj.json) or openhands")],
    run_dir: Annotated[Path, typer.Option("--run-dir", help="the specqual run directory to write into")],
    cohort: Annotated[str, typer.Option("--cohort", help="the cohort name the units go under")],
    tool_format: Annotated[
        str | None, typer.Option("--tool-format", help="the tool-call parser the server used (for classify)")
    ] = None,
    repeat: Annotated[int, typer.Option(help="repeat number of the first occurrence of each instance")] = 0,
) -> None:
    """Convert another agent's trajectories into specqual unit directories (trajectory.jsonl, patch.diff,
    verdict.json), so `specqual classify` and `specqual report` work on them.

    Example: specqual import --format mini-swe-agent runs/mini/ --run-dir results/mini-import --cohort mini
    """
    from eval.importers.common import ImporterError, import_units

    if not src.exists():
        fail(f"{src}: no such file or directory")
    try:
        summary = import_units(fmt, src, run_dir, cohort, tool_format, repeat)
    except ImporterError as e:
        fail(str(e))
        return
    typer.echo(f"imported {summary.units} units into {run_dir}/{cohort}")


def register(app: typer.Typer) -> None:
    """Add this stage's commands to the app."""
    app.command("rollout")(rollout)
    app.command("import")(import_)
