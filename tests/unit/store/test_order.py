"""The seeded instance order (store.order): stable, prefix-preserving, and the only one (eval schedules by it,
analysis tests in it)."""

from __future__ import annotations

from pathlib import Path

from store import order

REPO = Path(__file__).resolve().parents[3]


def test_order_is_stable_and_independent_of_other_instances() -> None:
    ids = [f"repo__{i}" for i in range(50)]
    full = order.ordered(ids)
    assert full == order.ordered(reversed(ids)) and full != sorted(ids)
    subset = set(ids[::3])
    assert order.ordered(subset) == [i for i in full if i in subset]


def test_there_is_one_order_module() -> None:
    copies = [p for top in ("eval", "analysis", "store", "scripts") for p in (REPO / top).rglob("order.py")]
    assert [p.relative_to(REPO).as_posix() for p in copies] == ["store/order.py"]
