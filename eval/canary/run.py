"""Run the canary over a whole matrix (or against one endpoint) and write probe records and summaries.

`run_canary(loaded, run, model, stacks_factory=...)` starts each canary cohort's stack (`eval.stages.serve_each`:
at most two servers at a time), probes it, stops it, then compares every cohort with its reference and writes
`<run>/<cohort>/probes/*.json` and `<run>/<cohort>/canary.json`. Cohorts whose probes are all on disk are skipped,
so a killed run resumes. `CanaryStage` is the canary's share of a stack session that may also run rollouts
(`specqual run`); `probe_endpoint(...)` probes a server that is already running.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Any

from rich.console import Console

from eval.canary.agent_text import agent_turn_texts
from eval.canary.client import CanaryClient
from eval.canary.compare import CohortSummary
from eval.canary.modes import MODES, ProbeContext
from eval.canary.progress import CanaryProgress
from eval.canary.prompts import PromptBook, local_tokenizer, server_tokenizer
from eval.canary.records import ProbeRecord, read_records, write_record
from eval.canary.results import canary_cohorts, compare_and_summarize, expected_records, reference_cohort
from eval.spec.errors import SpecError
from eval.spec.load import LoadedSpec
from eval.spec.matrix import Cohort
from eval.spec.models import CanaryWorkload, ModelSpec
from eval.stages import StackFactory, run_order, serve_each
from eval.store.run import RunDir


def canary_config(loaded: LoadedSpec) -> CanaryWorkload:
    cfg = loaded.spec.workloads.canary
    if cfg is None or not cfg.enabled:
        raise SpecError("workloads.canary", "this cohort file has no enabled canary workload")
    return cfg


def tool_choice(model: ModelSpec) -> str:
    """`auto` needs the server's tool-call flags; without a parser the chat still runs, tools unused."""
    return "auto" if model.tool_call_parser else "none"


def cohort_model(loaded: LoadedSpec, cohort: str) -> ModelSpec:
    """The model a cohort serves (the file's default model for a name outside the matrix)."""
    return next((c.model for c in loaded.cohorts if c.name == cohort), loaded.spec.model)


def make_book(cfg: CanaryWorkload, model_dir: Path | None, base_url: str | None, served: str) -> PromptBook:
    tokenize = local_tokenizer(model_dir) if model_dir is not None else None
    if tokenize is None:
        if base_url is None:
            raise SpecError("model", "no tokenizer.json in the model directory and no server to tokenize with")
        tokenize = server_tokenizer(base_url, served)
    texts = None
    if cfg.prompt_text == "agent_turns":
        if model_dir is None:
            raise SpecError("workloads.canary.prompt_text", "agent_turns needs the model directory (its chat template)")
        texts = agent_turn_texts(model_dir)
    return PromptBook(tokenize, cfg.seed, texts)


async def _probe(
    client: CanaryClient, ctx: ProbeContext, out_dir: Path, progress: CanaryProgress, skip: set[tuple[str, int]]
) -> list[ProbeRecord]:
    records: list[ProbeRecord] = []
    try:
        for mode in ctx.cfg.modes:
            if mode == "fuzz":
                records += await _fuzz(ctx, progress)
                continue
            for index in range(ctx.cfg.probes_per_mode):
                if (mode, index) in skip:
                    progress.advance(ctx.cohort, resumed=True)
                    continue
                probe = await MODES[mode](ctx, index)
                for rec in probe:
                    write_record(out_dir, rec)
                    records.append(rec)
                progress.advance(ctx.cohort, infra=sum(1 for r in probe if r.infra_error is not None))
    finally:
        await client.aclose()
    return records


async def _fuzz(ctx: ProbeContext, progress: CanaryProgress) -> list[ProbeRecord]:
    from eval.canary.fuzz.mode import fuzz_cohort

    progress.status(ctx.cohort, "fuzzing")
    recs = await fuzz_cohort(
        ctx.fuzz,
        ctx.cfg,
        ctx.client.base_url,
        ctx.client.model,
        ctx.cohort,
        ctx.out_dir,
        rescore=ctx.cfg.fuzz_greedy_rescore and not ctx.disaggregated,
        record_extra={"kv_faults": ctx.kv_faults} if ctx.kv_faults else None,
    )
    progress.advance(ctx.cohort, ctx.cfg.probes_per_mode, infra=sum(1 for r in recs if r.infra_error is not None))
    return recs


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
    model = cohort_model(loaded, cohort)
    client = CanaryClient(base_url, model.served_name, cfg.seed)
    ctx = ProbeContext(client=client, book=book, cfg=cfg, cohort=cohort, tool_choice=tool_choice(model))
    ctx.out_dir = out_dir
    ctx.disaggregated = any(c.topology.kind == "pd" for c in loaded.cohorts if c.name == cohort)
    if "fuzz" in cfg.modes:
        from eval.canary.fuzz.mode import gen_context, load_space, stack_facts
        from eval.canary.fuzz.space import kv_faults_of

        mine = [c for c in loaded.cohorts if c.name == cohort]
        ctx.kv_faults = kv_faults_of(mine[0].server_args) if mine else None  # the file's args, then the entry's

        space = load_space(Path(out_dir).parent, base_url)
        ctx.fuzz = gen_context(cfg, book, space, stack_facts(loaded), loaded.spec.server.device)
    skip = done_probes(out_dir, cfg) if resume else set()
    return asyncio.run(_probe(client, ctx, out_dir, progress, skip))


def done_probes(out_dir: Path, cfg: CanaryWorkload) -> set[tuple[str, int]]:
    """(mode, index) pairs whose every request is on disk with an answer (a failed probe is retried)."""
    recs = read_records(out_dir)
    done: set[tuple[str, int]] = set()
    for mode in cfg.modes:
        if mode == "fuzz":  # resumed per case inside the mode (eval/canary/fuzz/mode.py)
            continue
        for index in range(cfg.probes_per_mode):
            ids = expected_records(mode, index)
            if all(i in recs and recs[i].infra_error is None for i in ids):
                done.add((mode, index))
    return done


def run_canary(
    loaded: LoadedSpec,
    run: RunDir,
    model: Path,
    *,
    stacks_factory: StackFactory,
    console: Console | None = None,
    cohorts: list[str] | None = None,
) -> dict[str, CohortSummary]:
    """Probe every canary cohort (or `cohorts`) on the stacks `stacks_factory` starts (`eval.executors.stacks`),
    compare, summarize; return cohort -> summary."""
    factory = stacks_factory
    with canary_stage(loaded, run, model, console or Console(stderr=True), cohorts) as stage:
        order = [c for c in run_order(loaded, cohorts) if stage.pending(c)]
        serve_each(order, factory, stage.serve, stage.start_failed, stage.starting)
    return stage.summarize()


def total(cfg: CanaryWorkload) -> int:
    return len(cfg.modes) * cfg.probes_per_mode  # the fuzz mode counts as probes_per_mode steps when it ends


class CanaryStage:
    """The canary's share of each cohort's stack session: probe the stack, time it, record a failed start.

    Comparisons wait for `summarize()`, after every cohort is probed (the reference may come later on resume).
    """

    def __init__(self, loaded: LoadedSpec, run: RunDir, model: Path, progress: CanaryProgress) -> None:
        self.loaded, self.run, self.model, self.progress = loaded, run, model, progress
        self.cfg = canary_config(loaded)
        served = cohort_model(loaded, reference_cohort(loaded)).served_name
        self.book = make_book(self.cfg, model, None, served) if local_tokenizer(model) else None
        self.walls: dict[str, float] = {}
        self._t0: dict[str, float] = {}

    def pending(self, cohort: Cohort) -> bool:
        done = done_probes(self.run.cohort_dir(cohort.name), self.cfg)
        return cohort.runs("canary") and len(done) < total(self.cfg)

    def starting(self, cohort: Cohort) -> None:
        if self.pending(cohort):
            self._t0[cohort.name] = time.monotonic()
            self.progress.status(cohort.name, "starting server")

    def serve(self, cohort: Cohort, stack: Any) -> None:
        self.progress.status(cohort.name, "probing")
        cdir = self.run.cohort_dir(cohort.name)
        book = self.book or make_book(self.cfg, self.model, stack.base_url, cohort.model.served_name)
        with _metrics(stack, cdir, every_s=1.0 if "fuzz" in self.cfg.modes else None):
            probe_endpoint(self.loaded, cohort.name, stack.base_url, cdir, book, self.progress)
        self.walls[cohort.name] = round(time.monotonic() - self._t0.get(cohort.name, time.monotonic()), 1)
        self.progress.status(cohort.name, "probed")

    def start_failed(self, cohort: Cohort, reason: str) -> None:
        _record_start_failure(self.loaded, self.run, cohort, reason, self.progress)

    def summarize(self) -> dict[str, CohortSummary]:
        return compare_and_summarize(self.loaded, self.run, self.walls)


@contextmanager
def canary_stage(
    loaded: LoadedSpec, run: RunDir, model: Path, console: Console, only: list[str] | None = None
) -> Iterator[CanaryStage]:
    """A `CanaryStage` with its progress view; cohorts whose probes are all on disk are shown as resumed."""
    cfg = canary_config(loaded)
    cohorts = [c for c in canary_cohorts(loaded) if only is None or c.name in only]
    with CanaryProgress(console, [c.name for c in cohorts], total(cfg)) as progress:
        stage = CanaryStage(loaded, run, model, progress)
        for c in cohorts:
            if not stage.pending(c):
                progress.status(c.name, "on disk (resumed)")
                progress.advance(c.name, total(cfg), resumed=True)
        yield stage


def _metrics(stack: Any, cohort_dir: Path, every_s: float | None = None) -> AbstractContextManager[Any]:
    """/metrics snapshots before and after the probes (acceptance, prefix-cache hits) into metrics.jsonl."""
    from eval.stacks.metrics import MetricsRecorder

    urls = list(getattr(stack, "metrics_urls", []) or [])
    recorder = MetricsRecorder(urls, cohort_dir / "metrics.jsonl")
    return recorder.around("canary", every_s) if urls else nullcontext()


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
            progress.advance(cohort.name, infra=len(expected_records(mode, index)))
    progress.status(cohort.name, "failed to start")
