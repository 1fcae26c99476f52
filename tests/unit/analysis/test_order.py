"""The seeded instance order: stable, prefix-preserving, and the same in eval and analysis."""

from __future__ import annotations

from analysis import order


def test_order_is_stable_and_independent_of_other_instances() -> None:
    ids = [f"repo__{i}" for i in range(50)]
    full = order.ordered(ids)
    assert full == order.ordered(reversed(ids)) and full != sorted(ids)
    subset = set(ids[::3])
    assert order.ordered(subset) == [i for i in full if i in subset]


def test_eval_schedules_in_the_same_order() -> None:
    from eval.rollout import order as eval_order

    ids = [f"django__django-{i}" for i in range(40)]
    assert eval_order.ordered(ids) == order.ordered(ids)
