"""`eval.stages`: each cohort's stack starts once and serves every workload the cohort still has to do."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from eval.spec.load import load_spec
from eval.spec.matrix import Cohort
from eval.stages import run_order, serve_each

DEMO = Path(__file__).resolve().parents[3] / "cohorts" / "canary-cpu.yaml"


class FakeStacks:
    """A stack factory that records starts and stops and how many stacks were up at once."""

    def __init__(self, fail: set[str] | None = None) -> None:
        self.fail = fail or set()
        self.started: list[str] = []
        self.stopped: list[str] = []
        self.up = 0
        self.most_up = 0
        self.lock = threading.Lock()

    def __call__(self, cohort: Cohort) -> Any:
        stacks = self

        class Stack:
            base_url = f"http://{cohort.name}"

            def __enter__(self) -> Any:
                if cohort.name in stacks.fail:
                    raise RuntimeError(f"{cohort.name} exited with code 1")
                with stacks.lock:
                    stacks.started.append(cohort.name)
                    stacks.up += 1
                    stacks.most_up = max(stacks.most_up, stacks.up)
                return self

            def __exit__(self, *exc: object) -> None:
                with stacks.lock:
                    stacks.stopped.append(cohort.name)
                    stacks.up -= 1

        return Stack()


def test_one_start_per_cohort_for_all_its_work() -> None:
    loaded = load_spec([str(DEMO)])
    stacks = FakeStacks()
    served: list[tuple[str, str]] = []

    def work(cohort: Cohort, stack: Any) -> None:
        for workload in cohort.workloads:  # what a cohort running both would do: probes, then rollouts
            served.append((cohort.name, workload))
        assert stack.base_url == f"http://{cohort.name}"

    serve_each(loaded.cohorts, stacks, work, lambda c, r: pytest.fail(r))
    names = [c.name for c in loaded.cohorts]
    assert sorted(stacks.started) == sorted(names) == sorted(stacks.stopped)
    assert stacks.most_up <= 2 and stacks.up == 0
    assert ("smollm2-ngram", "swebench") in served and ("fixed-off", "canary") in served


def test_a_failed_start_is_reported_and_the_next_cohort_runs() -> None:
    loaded = load_spec([str(DEMO)])
    order = loaded.cohorts[:3]
    stacks = FakeStacks(fail={order[1].name})
    failed: dict[str, str] = {}
    served: list[str] = []
    serve_each(order, stacks, lambda c, s: served.append(c.name), lambda c, r: failed.update({c.name: r}))
    assert served == [order[0].name, order[2].name]
    assert "exited with code 1" in failed[order[1].name]
    assert stacks.up == 0


def test_work_that_raises_stops_every_stack() -> None:
    loaded = load_spec([str(DEMO)])
    stacks = FakeStacks()

    def boom(cohort: Cohort, stack: Any) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        serve_each(loaded.cohorts, stacks, boom, lambda c, r: None)
    assert stacks.up == 0  # the current stack and the one started ahead of time


def test_the_canary_reference_goes_first() -> None:
    loaded = load_spec([str(DEMO), "workloads.canary.reference=fixed-reverted-off"])
    assert [c.name for c in run_order(loaded)][:2] == ["fixed-reverted-off", "fixed-off"]
    assert [c.name for c in run_order(loaded, ["smollm2-off"])] == ["smollm2-off"]


def test_a_log_says_which_stacks_are_still_starting(monkeypatch: pytest.MonkeyPatch) -> None:
    import io
    import time

    from rich.console import Console

    from eval.stages import StackStarts

    monkeypatch.setenv("SPECQUAL_PROGRESS_EVERY_S", "0.01")
    loaded = load_spec([str(DEMO)])
    out = io.StringIO()
    release = threading.Event()

    class SlowStack:
        def __enter__(self) -> Any:
            release.wait(10)
            return self

        def __exit__(self, *exc: object) -> None:
            pass

    with StackStarts(Console(file=out, force_terminal=False, width=200)) as starts:
        factory = starts.wrap(lambda cohort: SlowStack())
        started = threading.Thread(target=lambda: factory(loaded.cohorts[0]).__enter__())
        started.start()
        deadline = time.monotonic() + 10
        while "(starting)" not in out.getvalue() and time.monotonic() < deadline:
            time.sleep(0.01)
        release.set()
        started.join(10)
        assert starts.lines() == []  # started: no longer shown
    first = out.getvalue().splitlines()[0]
    assert first.startswith(f"progress stack {loaded.cohorts[0].name}: 0/1 done, 0 infra, elapsed ")
    assert first.endswith(", ETA - (starting)")
