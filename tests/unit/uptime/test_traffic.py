"""The soak scheduler: bounded by requests or time, concurrency held, during hooks fired beside the load."""

from __future__ import annotations

import asyncio

from eval.spec.workloads import SoakWorkload
from eval.uptime.plan import build_plan
from eval.uptime.traffic import SoakCounts, run_traffic
from tests.doubles.soak_client import ScriptedSoakClient


def test_plan_is_sent_with_bounded_concurrency_and_the_hook_fires_mid_load() -> None:
    plan = build_plan(SoakWorkload(cohorts=["x"], requests=60, abort_fraction=0.3))
    client = ScriptedSoakClient()
    seen: list[tuple[int, int]] = []

    async def hook(done: int) -> None:
        seen.append((done, client.in_flight))

    counts = asyncio.run(run_traffic(client, plan, 4, None, {0.5: hook}))  # type: ignore[arg-type]
    assert isinstance(counts, SoakCounts)
    assert counts.sent == counts.finished == 60 and counts.aborted > 0
    assert client.max_in_flight == 4
    assert len(seen) == 1 and 30 <= seen[0][0] < 40 and seen[0][1] > 0  # fired while requests were in flight


def test_duration_ends_the_soak_and_a_late_hook_still_runs() -> None:
    plan = build_plan(SoakWorkload(cohorts=["x"], requests=None, duration_s=0.3))
    client = ScriptedSoakClient(delay_s=0.01)
    fired: list[int] = []

    async def hook(done: int) -> None:
        fired.append(done)

    counts = asyncio.run(run_traffic(client, plan, 2, 0.3, {0.5: hook, 2.0: hook}))  # type: ignore[arg-type]
    assert 10 < counts.finished < 200 and counts.wall_s < 2
    assert len(fired) == 2 and fired[0] < fired[1]  # the second (beyond the soak) ran after it
