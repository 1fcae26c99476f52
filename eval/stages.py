"""Each cohort's stack once: start it (the next cohort's stack starting meanwhile), run the work the cohort still
has to do against it (canary probes, SWE-bench rollouts), stop it.

At most two stacks exist at a time: server start-up dominates on CPU (30-60 s alone), and two starting side by
side share the cores better than one after the other.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractContextManager
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
    work: Work,
    start_failed: StartFailed,
    starting: Callable[[Cohort], None] | None = None,
) -> None:
    """For each cohort in `order`: start its stack once, `work(cohort, stack)`, stop it.

    A stack that fails to start is `start_failed(cohort, reason)` and the next cohort goes on; an exception from
    `work` stops the stack and propagates.
    """
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
                work(cohort, stack)
            finally:
                cm.__exit__(None, None, None)
    finally:
        starter.close()


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
