"""Run the canary over a whole matrix (or against one endpoint) and write probe records and summaries.

`run_canary(loaded, run, model)` starts each cohort's stack (at most two servers at a time: the next one starts
while the current one is probed), probes it, stops it, then compares every cohort with its reference and writes
`<run>/<cohort>/probes/*.json` and `<run>/<cohort>/canary.json`. Cohorts whose probes are all on disk are skipped,
so a killed run resumes. `probe_endpoint(...)` probes a server that is already running.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any

from rich.console import Console

from eval.canary.client import CanaryClient
from eval.canary.compare import CohortSummary
from eval.canary.modes import MODES, ProbeContext
from eval.canary.progress import CanaryProgress
from eval.canary.prompts import PromptBook, local_tokenizer, server_tokenizer
from eval.canary.records import ProbeRecord, read_records, write_record
from eval.canary.results import compare_and_summarize, expected_records, reference_cohort
from eval.spec.errors import SpecError
from eval.spec.load import LoadedSpec
from eval.spec.matrix import Cohort
from eval.spec.models import CanaryWorkload
from eval.store.run import RunDir

StackFactory = Callable[[Cohort], AbstractContextManager[Any]]


def canary_config(loaded: LoadedSpec) -> CanaryWorkload:
    cfg = loaded.spec.workloads.canary
    if cfg is None or not cfg.enabled:
        raise SpecError("workloads.canary", "this cohort file has no enabled canary workload")
    return cfg


def tool_choice(loaded: LoadedSpec) -> str:
    """`auto` needs the server's tool-call flags; without a parser the chat still runs, tools unused."""
    return "auto" if loaded.spec.model.tool_call_parser else "none"


def make_book(cfg: CanaryWorkload, model_dir: Path | None, base_url: str | None, served: str) -> PromptBook:
    tokenize = local_tokenizer(model_dir) if model_dir is not None else None
    if tokenize is None:
        if base_url is None:
            raise SpecError("model", "no tokenizer.json in the model directory and no server to tokenize with")
        tokenize = server_tokenizer(base_url, served)
    return PromptBook(tokenize, cfg.seed)


async def _probe(
    client: CanaryClient, ctx: ProbeContext, out_dir: Path, progress: CanaryProgress, skip: set[tuple[str, int]]
) -> list[ProbeRecord]:
    records: list[ProbeRecord] = []
    try:
        for mode in ctx.cfg.modes:
            for index in range(ctx.cfg.probes_per_mode):
                if (mode, index) in skip:
                    progress.advance(ctx.cohort)
                    continue
                for rec in await MODES[mode](ctx, index):
                    write_record(out_dir, rec)
                    records.append(rec)
                progress.advance(ctx.cohort)
    finally:
        await client.aclose()
    return records


def probe_endpoint(
    loaded: LoadedSpec,
    cohort: str,
    base_url: str,
    out_dir: Path,
    book: PromptBook,
    progress: CanaryProgress,
    resume: bool = True,
) -> list[ProbeRecord]:
    """Probe one running server; write one record per request under `out_dir/probes/`."""
    cfg = canary_config(loaded)
    client = CanaryClient(base_url, loaded.spec.model.served_name, cfg.seed)
    ctx = ProbeContext(client=client, book=book, cfg=cfg, cohort=cohort, tool_choice=tool_choice(loaded))
    skip = done_probes(out_dir, cfg) if resume else set()
    return asyncio.run(_probe(client, ctx, out_dir, progress, skip))


def done_probes(out_dir: Path, cfg: CanaryWorkload) -> set[tuple[str, int]]:
    """(mode, index) pairs whose every request is on disk with an answer (a failed probe is retried)."""
    recs = read_records(out_dir)
    done: set[tuple[str, int]] = set()
    for mode in cfg.modes:
        for index in range(cfg.probes_per_mode):
            ids = expected_records(mode, index)
            if all(i in recs and recs[i].infra_error is None for i in ids):
                done.add((mode, index))
    return done


def default_stacks(loaded: LoadedSpec, run: RunDir, model: Path) -> StackFactory:
    """Build (cached) and launch each cohort's stack through `eval.stacks`."""
    from eval.stacks import ensure_build, launch

    def factory(cohort: Cohort) -> AbstractContextManager[Any]:
        build = ensure_build(loaded.spec, cohort.factors["build"])
        return launch(loaded.spec, cohort, model, run.path, build)

    return factory


def run_order(loaded: LoadedSpec, reference: str, only: list[str] | None) -> list[Cohort]:
    """The reference first, then the matrix order (comparisons run after everything is on disk)."""
    cohorts = [c for c in loaded.cohorts if only is None or c.name in only]
    return sorted(cohorts, key=lambda c: c.name != reference)


def run_canary(
    loaded: LoadedSpec,
    run: RunDir,
    model: Path,
    *,
    console: Console | None = None,
    stacks_factory: StackFactory | None = None,
    cohorts: list[str] | None = None,
) -> dict[str, CohortSummary]:
    """Probe every cohort (or `cohorts`), compare, summarize; return cohort -> summary."""
    cfg = canary_config(loaded)
    console = console or Console(stderr=True)
    reference = reference_cohort(loaded)
    factory = stacks_factory or default_stacks(loaded, run, model)
    order = [
        c for c in run_order(loaded, reference, cohorts) if len(done_probes(run.cohort_dir(c.name), cfg)) < total(cfg)
    ]
    book = make_book(cfg, model, None, loaded.spec.model.served_name) if local_tokenizer(model) else None
    walls: dict[str, float] = {}
    with CanaryProgress(
        console, [c.name for c in loaded.cohorts if cohorts is None or c.name in cohorts], total(cfg)
    ) as progress:
        for name in {c.name for c in loaded.cohorts} - {c.name for c in order}:
            progress.status(name, "on disk (resumed)")
            progress.advance(name, total(cfg))
        _probe_all(loaded, run, order, factory, book, model, progress, walls)
    return compare_and_summarize(loaded, run, walls)


def total(cfg: CanaryWorkload) -> int:
    return len(cfg.modes) * cfg.probes_per_mode


StartedStack = tuple[AbstractContextManager[Any], Any]


def _start(factory: StackFactory, cohort: Cohort) -> StartedStack:
    cm = factory(cohort)
    return cm, cm.__enter__()


class _Starter:
    """Starts the next cohort's stack while the current one starts or is probed: two stacks at most.

    Server start-up dominates on CPU (30-60 s alone); two starting side by side share the cores better than
    one after the other.
    """

    def __init__(self, factory: StackFactory) -> None:
        self.factory = factory
        self.pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="canary-start")
        self.pending: Future[StartedStack] | None = None

    def take(self, cohort: Cohort) -> Future[StartedStack]:
        current, self.pending = self.pending or self.pool.submit(_start, self.factory, cohort), None
        return current

    def prefetch(self, cohort: Cohort | None) -> None:
        if cohort is not None:
            self.pending = self.pool.submit(_start, self.factory, cohort)

    def close(self) -> None:
        """A stack started ahead of time must not outlive an interrupted run."""
        if self.pending is not None:
            try:
                cm, _ = self.pending.result()
                cm.__exit__(None, None, None)
            except Exception:
                pass
        self.pool.shutdown()


def _probe_all(
    loaded: LoadedSpec,
    run: RunDir,
    order: list[Cohort],
    factory: StackFactory,
    book: PromptBook | None,
    model: Path,
    progress: CanaryProgress,
    walls: dict[str, float],
) -> None:
    starter = _Starter(factory)
    try:
        for i, cohort in enumerate(order):
            progress.status(cohort.name, "starting server")
            t0 = time.monotonic()
            current = starter.take(cohort)
            starter.prefetch(order[i + 1] if i + 1 < len(order) else None)
            try:
                cm, stack = current.result()
            except Exception as e:  # any launch failure is this cohort's infra failure
                _record_start_failure(loaded, run, cohort, f"stack failed to start: {type(e).__name__}: {e}", progress)
                continue
            try:
                progress.status(cohort.name, "probing")
                use = book or make_book(canary_config(loaded), model, stack.base_url, loaded.spec.model.served_name)
                with _metrics(stack, run.cohort_dir(cohort.name)):
                    probe_endpoint(loaded, cohort.name, stack.base_url, run.cohort_dir(cohort.name), use, progress)
            finally:
                cm.__exit__(None, None, None)
            walls[cohort.name] = round(time.monotonic() - t0, 1)
            progress.status(cohort.name, "probed")
    finally:
        starter.close()


def _metrics(stack: Any, cohort_dir: Path) -> AbstractContextManager[Any]:
    """/metrics snapshots before and after the probes (acceptance, prefix-cache hits) into metrics.jsonl."""
    from eval.stacks.metrics import MetricsRecorder

    urls = list(getattr(stack, "metrics_urls", []) or [])
    return MetricsRecorder(urls, cohort_dir / "metrics.jsonl").around("canary") if urls else nullcontext()


def _record_start_failure(
    loaded: LoadedSpec, run: RunDir, cohort: Cohort, reason: str, progress: CanaryProgress
) -> None:
    cfg = canary_config(loaded)
    for mode in cfg.modes:
        for index in range(cfg.probes_per_mode):
            for pid in expected_records(mode, index):
                role = pid.rsplit("-", 1)[1]
                rec = ProbeRecord(
                    probe_id=pid, cohort=cohort.name, mode=mode, index=index, role=role, infra_error=reason
                )
                write_record(run.cohort_dir(cohort.name), rec)
            progress.advance(cohort.name)
    progress.status(cohort.name, "failed to start")
