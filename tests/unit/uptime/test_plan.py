"""The soak plan: seeded, bounded, with shared prefixes, long requests and aborts."""

from __future__ import annotations

from eval.spec.workloads import SoakWorkload
from eval.uptime.phases import probe_chat
from eval.uptime.plan import build_plan, session_chat


def cfg(**kw: object) -> SoakWorkload:
    return SoakWorkload(cohorts=["x"], **kw)  # type: ignore[arg-type]


def test_the_same_seed_gives_the_same_plan_and_another_seed_another() -> None:
    a, b, c = build_plan(cfg(seed=1)), build_plan(cfg(seed=1)), build_plan(cfg(seed=2))
    assert a == b
    assert [r.session for r in a] != [r.session for r in c]
    assert len(a) == 120


def test_turn_two_extends_turn_one_so_it_is_a_prefix_hit() -> None:
    one, two = session_chat(3, 1), session_chat(3, 2)
    assert two[: len(one)] == one and len(two) == len(one) + 2
    assert two[2]["tool_calls"][0]["function"]["name"] == "bash"


def test_plan_mixes_long_short_streamed_and_aborted_requests() -> None:
    plan = build_plan(cfg(requests=400, abort_fraction=0.2, long_fraction=0.3))
    longs = sum(r.long for r in plan)
    aborted = [r for r in plan if r.abort_after_chunks is not None]
    assert 80 < longs < 160
    assert aborted and all(r.stream for r in aborted)
    assert {r.turn for r in plan} == {1, 2}
    assert {r.max_tokens for r in plan} == {48, 192}


def test_probes_never_share_an_instance_with_the_soak() -> None:
    soak_users = {r.messages[1]["content"] for r in build_plan(cfg(sessions=50))}
    assert all(probe_chat(i)[1]["content"] not in soak_users for i in range(8))
