"""Number formats shared by the report's tables, sections and verdict reasons: "—" for a value that does not
exist (NaN, None) and never "-0.00" for a difference that rounds to zero."""

from __future__ import annotations

import math


def pct(x: float | None, digits: int = 2) -> str:
    """0.1234 -> "12.34%"."""
    return "—" if x is None or math.isnan(x) else f"{100 * x:.{digits}f}%"


def pts(x: float | None) -> str:
    """A difference of rates in percentage points, signed: 0.0123 -> "+1.23"."""
    return "—" if x is None or math.isnan(x) else f"{round(100 * x, 2) + 0.0:+.2f}"


def num(x: float | None, spec: str) -> str:
    """`format(x, spec)`, or "—"."""
    return "—" if x is None or math.isnan(x) else format(x, spec)
