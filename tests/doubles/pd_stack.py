"""Test double for a running P/D stack as scripts/gpu/pd_checks.py reads it: a name for its processes (real
`ManagedProcess` objects, started by the test) and a host; nothing else of `eval.stacks.local.LocalStack`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class PdStackDouble:
    procs: list[Any] = field(default_factory=list)
    host: str = "127.0.0.1"
