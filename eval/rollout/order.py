"""The seeded order in which a run schedules SWE-bench instances, shared by every cohort and its control.

An instance's place is the SHA-256 of a fixed salt and its id: the same order for a cohort and its control, stable
across resumes and independent of which other instances exist or how they turned out. analysis/order.py computes
the same key (the packages never import each other; tests/unit/analysis/test_order.py checks they agree): the
sequential test reads the per-instance differences in exactly the order the run produced them.
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
