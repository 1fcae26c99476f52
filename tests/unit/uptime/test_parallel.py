"""`specqual soak --parallel`: every cohort gets its own stack, a failed start is recorded, stacks are stopped."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import SimpleNamespace

from eval.commands.soak import _in_parallel


def test_each_cohort_on_its_own_stack_and_a_failed_start_is_recorded() -> None:
    cohorts = [SimpleNamespace(name=n) for n in ("ref", "a", "b", "broken")]
    stopped: list[str] = []
    worked: list[tuple[str, str]] = []
    failed: list[tuple[str, str]] = []
    lock = threading.Lock()

    @contextmanager
    def stack(name: str) -> Iterator[str]:
        if name == "broken":
            raise RuntimeError("no port")
        try:
            yield f"stack-{name}"
        finally:
            with lock:
                stopped.append(name)

    def work(c: SimpleNamespace, s: str) -> None:
        with lock:
            worked.append((c.name, s))

    _in_parallel(cohorts, lambda c: stack(c.name), work, lambda c, r: failed.append((c.name, r)), 3)
    assert sorted(worked) == [("a", "stack-a"), ("b", "stack-b"), ("ref", "stack-ref")]
    assert sorted(stopped) == ["a", "b", "ref"]
    assert failed and failed[0][0] == "broken" and "no port" in failed[0][1]
