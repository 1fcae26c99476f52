"""The one seeded order in which instances enter the sequential tests (and in which `specqual run` schedules them).

An instance's place is the SHA-256 of a fixed salt and its id: the order is the same for every cohort of a run and
for its control, does not depend on which other instances exist (a prefix of a run stays a prefix when more
instances are added or some fail), and owes nothing to the outcomes, so the per-instance differences enter the
tests as an exchangeable sequence. eval/rollout/order.py computes the same key (the packages never import each
other; tests/unit/analysis/test_order.py checks the two agree).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

SALT = "specqual-order-v1"


def order_key(instance_id: str, salt: str = SALT) -> str:
    return hashlib.sha256(f"{salt}:{instance_id}".encode()).hexdigest()


def ordered(instance_ids: Iterable[str], salt: str = SALT) -> list[str]:
    """The instances in the run's order (ties, impossible in practice, broken by id)."""
    return sorted(set(instance_ids), key=lambda i: (order_key(i, salt), i))
