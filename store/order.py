"""The one seeded order of instances: `specqual run` schedules them in it, and the sequential tests read them in it.

An instance's place is the SHA-256 of a fixed salt and its id: the order is the same for every cohort of a run and
for its control, is stable across resumes, does not depend on which other instances exist (a prefix of a run stays
a prefix when more instances are added or some fail), and owes nothing to the outcomes, so the per-instance
differences enter the tests as an exchangeable sequence, exactly in the order the run produced them.
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
