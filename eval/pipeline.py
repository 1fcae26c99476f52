"""`specqual run`: every stage a cohort file asks for, resumable, ending with the report.

Order: write the cohort records; then each cohort's stack starts once (`eval.stages.serve_each`: the next
cohort's stack starts meanwhile, two at most; `executor.concurrent_stacks: N` starts and serves N at once) and
serves what the cohort runs, in turn: its canary probes, then its SWE-bench rollouts, graded as units finish
(unless `workloads.swebench.grade_during_run: false`); after every cohort, the canary's comparisons (each cohort's
probes token by token against its control or the reference); a grading pass for anything left ungraded;
classification of every trajectory; the report (the analysis package, in its own process: eval never imports
analysis). Every stage skips what is already on disk and a cohort with nothing left to do is not started, so
the same command with the same `--run-id` resumes a killed run. Stages are imported lazily: a canary-only file
never imports the agent. `--cohort NAME` (repeatable, `select_cohorts`) runs a subset of the matrix; a subset that
runs the canary must hold its reference. scripts/gpu/qualify_node.py is a caller of `serve_stage`.
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from collections.abc import Callable, Collection, Mapping
from contextlib import ExitStack, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from rich.console import Console

from eval.progress import FileTally, Heartbeat
from eval.protocols import Executor
from eval.spec.errors import SpecError
from eval.spec.load import LoadedSpec
from eval.spec.matrix import Cohort, canary_reference
from eval.spec.models import DEFAULT_MODEL
from eval.stacks.commands import cohort_commands
from eval.stages import Together
from eval.store.run import RunDir, now, open_run


def model_path(loaded: LoadedSpec, console: Console | None = None, name: str = DEFAULT_MODEL) -> Path:
    """The model directory of model `name`: its `path`, or the generated model (cached by its inputs)."""
    from eval.stacks.models import model_dir

    gen = loaded.spec.all_models()[name].generate
    if gen is not None and console:
        console.print(f"model {name}: generating {gen.kind} (seed {gen.seed}) or reusing the cached one")
    return model_dir(loaded.spec, name=name)


def model_paths(loaded: LoadedSpec, console: Console | None = None) -> dict[str, Path]:
    """Model name -> directory, for every model a cohort serves (declared but unused models are not built)."""
    return {name: model_path(loaded, console, name) for name in dict.fromkeys(c.model_name for c in loaded.cohorts)}


def write_cohorts(loaded: LoadedSpec, run: RunDir, models: Mapping[str, str | Path] | str | Path) -> None:
    """cohort.json for every cohort; `models` maps model names to directories (one path: every cohort's)."""
    for cohort in loaded.cohorts:
        path = models if isinstance(models, str | Path) else models[cohort.model_name]
        cmds = [p.shell() for p in cohort_commands(loaded.spec, cohort, str(path))]
        run.write_cohort(loaded, cohort, cmds)


def select_cohorts(loaded: LoadedSpec, names: list[str] | None) -> LoadedSpec:
    """The loaded file with only the cohorts `names` (all when None or empty), in matrix order. Unknown names, and
    a subset that runs the canary without its reference cohort, are errors before anything starts."""
    if not names:
        return loaded
    known = [c.name for c in loaded.cohorts]
    unknown = sorted(set(names) - set(known))
    if unknown:
        raise SpecError("--cohort", f"no cohort {', '.join(unknown)} (cohorts: {', '.join(known)})")
    picked = dataclasses.replace(loaded, cohorts=[c for c in loaded.cohorts if c.name in names])
    if any(c.runs("canary") for c in picked.cohorts):
        try:  # the canary compares against its reference: it must run too
            canary_reference(picked.spec, picked.cohorts)
        except SpecError as e:
            raise SpecError(
                "--cohort", f"{e.message}; add it, or name another with -c workloads.canary.reference=NAME"
            ) from None
    return picked


def run_pipeline(
    loaded: LoadedSpec,
    results: Path,
    run_id: str | None,
    report: bool = True,
    early_stop: bool = True,
    cohorts: list[str] | None = None,
) -> int:
    """Run (or resume) the matrix, or the `cohorts` of it; return the process exit code (1 when a SWE-bench stack
    did not start)."""
    from eval.executors import pick

    loaded = select_cohorts(loaded, cohorts)
    console = Console(stderr=True)
    executor = pick(loaded)  # the one place that reads executor.kind
    run = open_run(loaded, results, run_id)
    console.print(f"[bold]specqual run[/bold] {loaded.spec.name}: {len(loaded.cohorts)} cohorts -> {run.path}")
    models = model_paths(loaded, console)
    write_cohorts(loaded, run, models)
    not_started = serve_stage(loaded, run, models, console, executor, early_stop).not_started
    swebench = loaded.spec.workloads.swebench
    if "swebench" in loaded.spec.workloads.enabled() and swebench is not None and swebench.grade_during_run:
        grade_leftovers(run, console)
    classify_stage(run, console)
    run.mark(ended_at=now())
    code = write_report(run, console) if report else 0
    return code or (1 if not_started else 0)


class CohortWork(Protocol):
    """A workload's share of a cohort's stack session (`CanaryStage`, `RolloutStage`)."""

    def pending(self, cohort: Cohort) -> bool: ...
    def starting(self, cohort: Cohort) -> None: ...
    def serve(self, cohort: Cohort, stack: Any) -> None: ...
    def start_failed(self, cohort: Cohort, reason: str) -> None: ...


@dataclass
class Served:
    """What `serve_stage` did."""

    not_started: list[str] = field(default_factory=list)  # SWE-bench cohorts whose stack did not start
    canary: dict[str, Any] = field(default_factory=dict)  # cohort -> the canary's CohortSummary
    probe_walls: dict[str, float] = field(default_factory=dict)  # cohort -> seconds from stack start to probed
    ready_s: dict[str, float] = field(default_factory=dict)  # cohort -> seconds its stack took to start


def serve_stage(
    loaded: LoadedSpec,
    run: RunDir,
    models: dict[str, Path],
    console: Console,
    executor: Executor,
    early_stop: bool = True,
    together: Together | None = None,
    workloads: Collection[str] | None = None,
) -> Served:
    """Each cohort's stack once (on `executor`; `executor.concurrent_stacks` at once), for its canary probes and
    then its rollouts; the canary's comparisons after every cohort. `together({cohort: stack})`: a context
    entered once a batch's stacks are all up, left before they stop (checks that need every stack). `workloads`:
    serve only these of the enabled workloads (default: all)."""
    from eval.executors import stacks
    from eval.stages import StackFactory, StackStarts, StartTimes, run_order, serve_each

    enabled = [w for w in loaded.spec.workloads.enabled() if workloads is None or w in workloads]
    canary: Any = None
    rollouts: Any = None
    with ExitStack() as scope:
        if "canary" in enabled:
            canary = scope.enter_context(_canary_stage(loaded, run, models, console))
        if "swebench" in enabled:
            rollouts = _rollout_stage(loaded, run, console, scope, executor, early_stop)
        stages: list[CohortWork] = [s for s in (canary, rollouts) if s is not None]
        order = [c for c in run_order(loaded) if any(s.pending(c) for s in stages)]
        for c in loaded.cohorts:
            if c.name not in {o.name for o in order} and c.runs("swebench"):
                console.print(f"{c.name}: every unit is done")

        def phase(stage: CohortWork) -> Callable[[Cohort, Any], None]:
            def work(cohort: Cohort, stack: Any) -> None:
                if stage is rollouts and canary_failed(loaded, run, cohort, console):
                    return
                if stage.pending(cohort):
                    with _uptime_phases(loaded, run, cohort, stack, around=stage is rollouts):
                        stage.serve(cohort, stack)

            return work

        def start_failed(cohort: Cohort, reason: str) -> None:
            for s in stages:
                if s.pending(cohort):
                    s.start_failed(cohort, reason)

        def starting(cohort: Cohort) -> None:
            for s in stages:
                s.starting(cohort)

        starts = StartTimes()
        factory: StackFactory = starts.wrap(stacks(executor, loaded, run.path, models))
        if not console.is_terminal:  # a log: say which stacks are still starting
            factory = scope.enter_context(StackStarts(console)).wrap(factory)
        concurrent = loaded.spec.executor.concurrent_stacks
        phases = [phase(s) for s in stages]
        serve_each(order, factory, phases, start_failed, starting, concurrent=concurrent, together=together)
    served = Served(not_started=list(rollouts.failed) if rollouts is not None else [], ready_s=starts.ready_s)
    if canary is not None:
        served.canary = canary.summarize()
        served.probe_walls = dict(canary.walls)
    return served


def _uptime_phases(loaded: LoadedSpec, run: RunDir, cohort: Cohort, stack: Any, around: bool) -> Any:
    """The soak's fresh and after phases around a cohort's rollouts when `workloads.soak.around_rollouts` names it
    (eval/uptime: the rollouts are the load); otherwise nothing."""
    soak = loaded.spec.workloads.soak
    if not around or soak is None or not soak.around_rollouts or cohort.name not in soak.cohorts:
        return nullcontext()
    from eval.uptime.session import around_rollouts

    return around_rollouts(loaded, run, cohort, stack)


def canary_failed(loaded: LoadedSpec, run: RunDir, cohort: Cohort, console: Console) -> bool:
    """True when the policy skips a cohort's rollouts after a failed canary and this cohort's canary failed
    (diverged from its control or reference, or the server failed its requests)."""
    if not loaded.spec.policy.skip_rollouts_on_canary_fail or not cohort.runs("canary"):
        return False
    from eval.canary.results import compare_and_summarize

    summary = compare_and_summarize(loaded, run, {}).get(cohort.name)  # rewritten with walls after every cohort
    if summary is None or summary.verdict not in ("corrupted", "failed"):
        return False
    console.print(f"{cohort.name}: canary {summary.verdict}: SWE-bench rollouts skipped (skip_rollouts_on_canary_fail)")
    return True


def _canary_stage(loaded: LoadedSpec, run: RunDir, models: dict[str, Path], console: Console) -> Any:
    from eval.canary.results import reference_cohort
    from eval.canary.run import canary_stage

    console.print("[bold]canary[/bold]: probes on every canary cohort, compared token by token")
    model = models[loaded.cohort(reference_cohort(loaded)).model_name]  # every canary cohort serves it
    return canary_stage(loaded, run, model, console)


def _rollout_stage(
    loaded: LoadedSpec, run: RunDir, console: Console, scope: ExitStack, executor: Executor, early_stop: bool
) -> Any:
    from eval.rollout.progress import RolloutProgress
    from eval.rollout.stage import RolloutStage

    progress = scope.enter_context(RolloutProgress(console))  # a live view, or progress lines in a log
    return RolloutStage(loaded, run, console, progress, executor, early_stop)


UNITS = "*/units/*/r*/verdict.json"
TRAJECTORIES = "*/units/*/r*/trajectory.jsonl"


def grade_leftovers(run: RunDir, console: Console) -> None:
    """Grade units whose grade is missing (a crash between verdict and grade): nothing stays ungraded."""
    from eval.grading.rerun import grade_run

    tally = FileTally("grading", run.path.name, run.path, UNITS, "grade.json")
    with Heartbeat(console, tally.lines):
        counts = grade_run(run.path)
    graded = {k: v for k, v in counts.items() if k != "skipped" and v}  # skipped: graded while units ran
    if graded:
        console.print(f"grading left-overs: {graded}")


def classify_stage(run: RunDir, console: Console) -> None:
    from eval.classify.rundir import classify_run

    tally = FileTally("classify", run.path.name, run.path, TRAJECTORIES, "labels.json", fresh=True)
    with Heartbeat(console, tally.lines):  # every unit is labelled again: count the labels written now
        summary = classify_run(run.path)
    console.print(f"classification: {summary.units} units labelled, {summary.corrupted} corrupted")


def write_report(run: RunDir, console: Console) -> int:
    """The report is built by the analysis package in its own process: eval never imports analysis."""
    proc = subprocess.run([sys.executable, "-m", "analysis", "report", str(run.path)], check=False)
    if proc.returncode != 0:
        console.print(f"[red]report failed (exit {proc.returncode})[/red]")
    return proc.returncode
