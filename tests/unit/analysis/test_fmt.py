"""Report number formats: a value that does not exist is "—", never "nan"; a difference that rounds to zero is
"+0.00", never "-0.00" (a paired comparison of two cohorts that both solve nothing showed both)."""

from __future__ import annotations

import math

import pytest

from analysis.fmt import num, pct, pts
from analysis.verdict import pts as reason_pts


@pytest.mark.parametrize("x", [-0.0, -0.000004, 0.0, 0.000004])
def test_a_difference_that_rounds_to_zero_has_no_minus_sign(x: float) -> None:
    assert pts(x) == "+0.00" and reason_pts(x) == "+0.00 pts"


def test_signed_points_and_percentages() -> None:
    assert (pts(0.0123), pts(-0.0456), pct(0.5), pct(0.12345, 1)) == ("+1.23", "-4.56", "50.00%", "12.3%")


@pytest.mark.parametrize("fmt", [pts, pct, lambda x: num(x, ".2f")])
def test_a_missing_value_is_a_dash(fmt) -> None:
    assert fmt(math.nan) == "—" and fmt(None) == "—"
