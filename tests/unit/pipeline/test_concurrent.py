"""`executor.concurrent_stacks` and `specqual run --cohort`: stacks started and served in batches, phase by phase,
and a subset of the matrix that keeps its canary reference."""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Any

import pytest

from eval.pipeline import select_cohorts
from eval.spec.errors import SpecError
from eval.spec.load import load_spec
from eval.spec.matrix import Cohort, canary_reference
from eval.stages import serve_each
from tests.unit.pipeline.test_stages import DEMO, FakeStacks


def test_a_batch_starts_together_and_each_phase_waits_for_every_stack() -> None:
    loaded = load_spec([str(DEMO), "executor.concurrent_stacks=3"])
    order = loaded.cohorts[:5]
    stacks = FakeStacks()
    events: list[tuple[str, str]] = []
    lock = threading.Lock()
    seen_together: list[list[str]] = []
    barrier = threading.Barrier(3, timeout=10)  # the first batch's probes run at the same time

    def probe(cohort: Cohort, stack: Any) -> None:
        if cohort in order[:3]:
            barrier.wait()
        with lock:
            events.append(("probe", cohort.name))

    def rollouts(cohort: Cohort, stack: Any) -> None:
        with lock:
            events.append(("rollouts", cohort.name))

    @contextmanager
    def together(up: dict[str, Any]):
        seen_together.append(sorted(up))
        assert stacks.up == len(up)
        yield

    concurrent = loaded.spec.executor.concurrent_stacks
    serve_each(order, stacks, [probe, rollouts], lambda c, r: pytest.fail(r), concurrent=concurrent, together=together)
    assert stacks.most_up == 3 and stacks.up == 0
    assert seen_together == [sorted(c.name for c in order[:3]), sorted(c.name for c in order[3:])]
    first = [kind for kind, name in events if name in {c.name for c in order[:3]}]
    assert first == ["probe"] * 3 + ["rollouts"] * 3  # no rollout before every probe of the batch is done


def test_a_failed_start_in_a_batch_spares_the_others_and_an_error_stops_all() -> None:
    loaded = load_spec([str(DEMO)])
    order = loaded.cohorts[:3]
    stacks = FakeStacks(fail={order[1].name})
    failed: dict[str, str] = {}
    served: list[str] = []
    serve_each(order, stacks, lambda c, s: served.append(c.name), lambda c, r: failed.update({c.name: r}), concurrent=3)
    assert sorted(served) == sorted([order[0].name, order[2].name]) and list(failed) == [order[1].name]

    def boom(cohort: Cohort, stack: Any) -> None:
        raise RuntimeError(f"{cohort.name} broke")

    stacks = FakeStacks()
    with pytest.raises(RuntimeError, match="broke"):
        serve_each(order, stacks, boom, lambda c, r: None, concurrent=3)
    assert stacks.up == 0


def test_run_cohort_subset_keeps_the_canary_reference() -> None:
    loaded = load_spec([str(DEMO)])
    names = [c.name for c in loaded.cohorts]
    assert select_cohorts(loaded, None) is loaded
    with pytest.raises(SpecError, match="no cohort nope"):
        select_cohorts(loaded, ["nope"])
    reference = canary_reference(loaded.spec, loaded.cohorts)
    canary = [c.name for c in loaded.cohorts if c.runs("canary") and c.name != reference]
    picked = select_cohorts(loaded, [canary[0], reference])
    assert [c.name for c in picked.cohorts] == [n for n in names if n in (canary[0], reference)]
    with pytest.raises(SpecError, match="reference"):
        select_cohorts(loaded, [canary[0]])
