"""`specqual run`: every stage a cohort file asks for, resumable, ending with the report.

Order: write the cohort records; build each cohort's vLLM; the canary over the whole matrix (it compares
cohorts with each other); the SWE-bench rollouts cohort by cohort, graded as units finish; a grading pass for
anything left ungraded; classification of every trajectory; the report (the analysis package, in its own
process: eval never imports analysis). Every stage skips what is already on disk, so the same command with the
same `--run-id` resumes a killed run. Stages are imported lazily: a canary-only file never imports the agent.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

from rich.console import Console

from eval.spec.load import LoadedSpec
from eval.spec.matrix import Cohort
from eval.stacks.commands import cohort_commands
from eval.store.run import RunDir, now, open_run


def model_path(loaded: LoadedSpec, console: Console | None = None) -> Path:
    """The model directory: the file's `model.path`, or the generated model (cached by its inputs)."""
    spec = loaded.spec
    if spec.model.path is not None:
        local = spec.resolve(spec.model.path)
        return local if local.exists() else Path(spec.model.path)
    from eval.registry import MODEL_GENERATORS, load
    from eval.stacks.envs import cache_root

    gen = spec.model.generate
    assert gen is not None
    if console:
        console.print(f"model: generating {gen.kind} (seed {gen.seed}) or reusing the cached one")
    out: Path = load(MODEL_GENERATORS, gen.kind)(cache_root() / "models", gen.seed, dict(gen.options))
    return out


def write_cohorts(loaded: LoadedSpec, run: RunDir, model: str) -> None:
    for cohort in loaded.cohorts:
        cmds = [p.shell() for p in cohort_commands(loaded.spec, cohort, model)]
        run.write_cohort(loaded, cohort, cmds)


def run_pipeline(loaded: LoadedSpec, results: Path, run_id: str | None, report: bool = True) -> int:
    """Run (or resume) the whole matrix; return the process exit code."""
    console = Console(stderr=True)
    run = open_run(loaded, results, run_id)
    console.print(f"[bold]specqual run[/bold] {loaded.spec.name}: {len(loaded.cohorts)} cohorts -> {run.path}")
    model = model_path(loaded, console)
    write_cohorts(loaded, run, str(model))
    workloads = loaded.spec.workloads
    if workloads.canary is not None and workloads.canary.enabled:
        run_canary_stage(loaded, run, model, console)
    if workloads.swebench is not None and workloads.swebench.enabled:
        run_swebench_stage(loaded, run, model, console)
        grade_leftovers(run, console)
    classify_stage(run, console)
    run.mark(ended_at=now())
    if not report:
        return 0
    return write_report(run, console)


def run_canary_stage(loaded: LoadedSpec, run: RunDir, model: Path, console: Console) -> None:
    from eval.canary.run import run_canary

    console.print("[bold]canary[/bold]: probes on every cohort, compared token by token")
    run_canary(loaded, run, model, console=console, stacks_factory=lambda c: _stack(loaded, run, c, model))


def run_swebench_stage(loaded: LoadedSpec, run: RunDir, model: Path, console: Console) -> None:
    from eval.rollout.progress import RolloutProgress
    from eval.tasks.load import load_tasks

    workload = loaded.spec.workloads.swebench
    assert workload is not None
    tasks = load_tasks(workload, loaded.spec.base_dir)
    console.print(f"[bold]swebench[/bold]: {len(tasks)} instances x {workload.repeats} repeats per cohort")
    with RolloutProgress(enabled=console.is_terminal) as progress:
        for cohort in loaded.cohorts:
            run_cohort_rollouts(loaded, run, cohort, model, tasks, progress, console)


def _stack(loaded: LoadedSpec, run: RunDir, cohort: Cohort, model: Path) -> Any:
    """A context manager for the cohort's stack, on the executor the file names."""
    from eval.stacks import ensure_build, launch

    build = ensure_build(loaded.spec, cohort.factors["build"])
    if loaded.spec.executor.kind == "slurm":
        from eval.executors.slurm import launch_stack

        return launch_stack(loaded, cohort, run, build, model)
    return launch(loaded.spec, cohort, model, run.path, build)


def run_cohort_rollouts(
    loaded: LoadedSpec, run: RunDir, cohort: Cohort, model: Path, tasks: list[Any], progress: Any, console: Console
) -> None:
    from eval.grading.factory import make_grader
    from eval.grading.stream import GradeQueue
    from eval.rollout.run import run_rollouts
    from eval.rollout.units import plan_units
    from eval.stacks.metrics import MetricsRecorder

    workload = loaded.spec.workloads.swebench
    assert workload is not None
    todo, _ = plan_units(run, cohort.name, tasks, workload.repeats)
    if not todo:
        console.print(f"{cohort.name}: every unit is done")
        return
    if loaded.spec.executor.kind == "slurm":
        # Units run as a Slurm job array (each array task writes its units); grading follows in grade_leftovers.
        from eval.executors.slurm import run_rollouts_slurm

        with _stack(loaded, run, cohort, model) as stack:
            array = run_rollouts_slurm(loaded, run, cohort, stack.base_url)
        console.print(
            f"{cohort.name}: {array.done}/{array.units} units done, {array.unfinished} unfinished "
            f"(Slurm jobs {', '.join(array.job_ids)})"
        )
        return
    by_id = {t.instance_id: t for t in tasks}
    grader = make_grader(workload.grader, log_root=run.cohort_dir(cohort.name) / "grading")
    with _stack(loaded, run, cohort, model) as stack, GradeQueue(grader, workload.grader.kind) as grades:
        recorder = MetricsRecorder(stack.metrics_urls, run.cohort_dir(cohort.name) / "metrics.jsonl")

        def graded(unit_dir: Path) -> None:
            grades.submit(by_id[unit_dir.parent.name], unit_dir)

        with recorder.around("swebench", every_s=60):
            summary = asyncio.run(
                run_rollouts(loaded, run, cohort, stack.base_url, tasks, progress=progress, on_unit_done=graded)
            )
    console.print(
        f"{cohort.name}: {summary.completed} completed, {summary.infra_errors} infra errors, "
        f"{summary.skipped} already done ({summary.wall_s:.0f} s)"
    )


def grade_leftovers(run: RunDir, console: Console) -> None:
    """Grade units whose grade is missing (a crash between verdict and grade): nothing stays ungraded."""
    from eval.grading.rerun import grade_run

    counts = grade_run(run.path)
    if sum(counts.values()):
        console.print(f"grading: {dict(counts)}")


def classify_stage(run: RunDir, console: Console) -> None:
    from eval.classify.rundir import classify_run

    summary = classify_run(run.path)
    console.print(f"classification: {summary.units} units labelled, {summary.corrupted} corrupted")


def write_report(run: RunDir, console: Console) -> int:
    """The report is built by the analysis package in its own process: eval never imports analysis."""
    proc = subprocess.run([sys.executable, "-m", "analysis", "report", str(run.path)], check=False)
    if proc.returncode != 0:
        console.print(f"[red]report failed (exit {proc.returncode})[/red]")
    return proc.returncode
