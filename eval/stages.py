"""Each cohort's stack once: start it (the next cohort's stack starting meanwhile), run the work the cohort still
has to do against it (canary probes, SWE-bench rollouts), stop it.

At most two stacks exist at a time: server start-up dominates on CPU (30-60 s alone), and two starting side by
side share the cores better than one after the other.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractContextManager
from typing import Any

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
