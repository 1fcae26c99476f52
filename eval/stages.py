"""Each cohort's stack once: start it, run the work the cohort still has to do against it (canary probes, then
SWE-bench rollouts), stop it.

`concurrent=1` (the default, `executor.concurrent_stacks`): one cohort at a time, the next cohort's stack starting
meanwhile, so at most two stacks exist: server start-up dominates on CPU (30-60 s alone), and two starting side by
side share the cores better than one after the other. `concurrent=N`: cohorts in batches of N whose stacks start
at once and serve at once, phase by phase (every canary of the batch, then every rollout), as a GPU node with a
GPU per stack wants it: four cold starts with CUDA graphs one after another do not fit a 10-minute job.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractContextManager, nullcontext
from types import TracebackType
from typing import Any

from rich.console import Console

from eval.progress import Heartbeat, line
from eval.spec.load import LoadedSpec
from eval.spec.matrix import Cohort, canary_reference

StackFactory = Callable[[Cohort], AbstractContextManager[Any]]
StartedStack = tuple[AbstractContextManager[Any], Any]
Work = Callable[[Cohort, Any], None]
StartFailed = Callable[[Cohort, str], None]
Together = Callable[[dict[str, Any]], AbstractContextManager[Any]]


def _start(factory: StackFactory, cohort: Cohort) -> StartedStack:
    cm = factory(cohort)
    return cm, cm.__enter__()


class Starter:
    """Starts the next cohort's stack while the current one starts or works: two stacks at most."""

    def __init__(self, factory: StackFactory) -> None:
        self.factory = factory
        self.pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="stack-start")
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


def run_order(loaded: LoadedSpec, only: list[str] | None = None) -> list[Cohort]:
    """The canary reference first, then the matrix order (canary comparisons run after every cohort is probed)."""
    reference = canary_reference(loaded.spec, loaded.cohorts)
    cohorts = [c for c in loaded.cohorts if only is None or c.name in only]
    return sorted(cohorts, key=lambda c: c.name != reference)


def serve_each(
    order: list[Cohort],
    factory: StackFactory,
    work: Work | list[Work],
    start_failed: StartFailed,
    starting: Callable[[Cohort], None] | None = None,
    concurrent: int = 1,
    together: Together | None = None,
) -> None:
    """For each cohort in `order`: start its stack once, run `work(cohort, stack)` (each phase of a list in
    turn), stop it. With `concurrent` > 1, see `serve_batch`.

    A stack that fails to start is `start_failed(cohort, reason)` and the next cohort goes on; an exception from
    `work` stops the stack and propagates.
    """
    phases = work if isinstance(work, list) else [work]
    if concurrent > 1 or together is not None:
        for i in range(0, len(order), max(concurrent, 1)):
            serve_batch(order[i : i + max(concurrent, 1)], factory, phases, start_failed, starting, together)
        return
    starter = Starter(factory)
    try:
        for i, cohort in enumerate(order):
            if starting is not None:
                starting(cohort)
            current = starter.take(cohort)
            starter.prefetch(order[i + 1] if i + 1 < len(order) else None)
            try:
                cm, stack = current.result()
            except Exception as e:  # any launch failure is this cohort's infra failure
                start_failed(cohort, f"stack failed to start: {type(e).__name__}: {e}")
                continue
            try:
                for phase in phases:
                    phase(cohort, stack)
            finally:
                cm.__exit__(None, None, None)
    finally:
        starter.close()


def serve_batch(
    batch: list[Cohort],
    factory: StackFactory,
    phases: list[Work],
    start_failed: StartFailed,
    starting: Callable[[Cohort], None] | None = None,
    together: Together | None = None,
) -> None:
    """Start every stack of `batch` at once; inside `together({cohort name: stack})` (checks that need every
    stack up, e.g. which GPU runs which worker), run each phase on every started stack at once, the next phase
    once every stack is done with this one; stop them all. The first exception of a phase propagates after the
    phase ends (the stacks are stopped either way)."""
    with ThreadPoolExecutor(max(len(batch), 1), thread_name_prefix="stack-start") as pool:
        for cohort in batch:
            if starting is not None:
                starting(cohort)
        futures = [(cohort, pool.submit(_start, factory, cohort)) for cohort in batch]
    started: list[tuple[Cohort, AbstractContextManager[Any], Any]] = []
    for cohort, future in futures:
        try:
            started.append((cohort, *future.result()))
        except Exception as e:  # any launch failure is this cohort's infra failure
            start_failed(cohort, f"stack failed to start: {type(e).__name__}: {e}")
    try:
        stacks = {c.name: stack for c, _, stack in started}
        with together(stacks) if together is not None and stacks else nullcontext():
            for phase in phases:
                with ThreadPoolExecutor(max(len(started), 1), thread_name_prefix="stack-work") as pool:
                    done = [pool.submit(phase, c, stack) for c, _, stack in started]
                errors = [f.exception() for f in done]
                first = next((err for err in errors if err is not None), None)
                if first is not None:
                    raise first
    finally:
        with ThreadPoolExecutor(max(len(started), 1), thread_name_prefix="stack-stop") as pool:
            list(pool.map(lambda cs: cs[1].__exit__(None, None, None), started))


class StartTimes:
    """Seconds from entering each cohort's stack to ready (`wrap(factory)`): cold starts, for timings."""

    def __init__(self) -> None:
        self.ready_s: dict[str, float] = {}

    def wrap(self, factory: StackFactory) -> StackFactory:
        return lambda cohort: _Timed(factory(cohort), cohort.name, self.ready_s)


class _Timed:
    def __init__(self, cm: AbstractContextManager[Any], name: str, ready_s: dict[str, float]) -> None:
        self.cm, self.name, self.ready_s = cm, name, ready_s

    def __enter__(self) -> Any:
        t0 = time.monotonic()
        stack = self.cm.__enter__()
        self.ready_s[self.name] = round(time.monotonic() - t0, 1)
        return stack

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        return self.cm.__exit__(exc_type, exc, tb)


class StackStarts:
    """Progress lines for stacks that are starting (a GPU server may take many minutes to load): while entered,
    one line per starting stack at least every 30 s. `wrap(factory)` times each stack's start."""

    def __init__(self, console: Console) -> None:
        self._starting: dict[str, float] = {}
        self._lock = threading.Lock()
        self._heartbeat = Heartbeat(console, self.lines)

    def lines(self) -> list[str]:
        with self._lock:
            starting = dict(self._starting)
        now = time.monotonic()
        return [line("stack", name, 0, 1, 0, now - t0, None) + " (starting)" for name, t0 in starting.items()]

    def wrap(self, factory: StackFactory) -> StackFactory:
        return lambda cohort: _TimedStart(factory(cohort), cohort.name, self)

    def __enter__(self) -> StackStarts:
        self._heartbeat.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._heartbeat.__exit__(*exc)


class _TimedStart:
    """A stack's context manager whose start is shown by `StackStarts`."""

    def __init__(self, cm: AbstractContextManager[Any], name: str, starts: StackStarts) -> None:
        self.cm, self.name, self.starts = cm, name, starts

    def __enter__(self) -> Any:
        with self.starts._lock:
            self.starts._starting[self.name] = time.monotonic()
        try:
            return self.cm.__enter__()
        finally:
            with self.starts._lock:
                self.starts._starting.pop(self.name, None)

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        return self.cm.__exit__(exc_type, exc, tb)
