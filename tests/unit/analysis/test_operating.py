"""A coarse version of benchmarks/bench_verdicts.py's grid, so the calibration of the verdict cannot rot.

Fixed seed; 1500 runs per cell, so alpha + 3 Monte Carlo SE = 6.7% is a real bound on every cell's error.
"""

from __future__ import annotations

import numpy as np
import pytest

from analysis import operating

PATHS, SIZES, ALPHA, MARGIN, CEILING = 1500, [10, 50, 200], 0.05, 0.03, 0.02
BOUND = operating.mc_bound(ALPHA, PATHS)


@pytest.mark.parametrize("repeats", [1, 3])
@pytest.mark.parametrize("icc", [0.0, 0.6])
@pytest.mark.parametrize("rate", [0.05, 0.4, 0.95])
def test_accuracy_errors_stay_under_alpha(rate: float, icc: float, repeats: int) -> None:
    rng = np.random.default_rng(17)
    at_margin = operating.accuracy_cell(rng, PATHS, SIZES, rate, MARGIN, repeats, icc, MARGIN, ALPHA)
    no_effect = operating.accuracy_cell(rng, PATHS, SIZES, rate, 0.0, repeats, icc, MARGIN, ALPHA)
    assert np.all(at_margin.pass_ <= BOUND), ("false PASS", at_margin.pass_)
    assert np.all(at_margin.fail <= BOUND), ("FAIL at the margin", at_margin.fail)
    assert np.all(no_effect.fail <= BOUND), ("false FAIL", no_effect.fail)


def test_the_seed_effect_is_found_within_a_hundred_instances() -> None:
    cell = operating.accuracy_cell(np.random.default_rng(1), 500, [100], 0.3867, 0.3487, 3, 0.4, MARGIN, ALPHA)
    assert cell.fail[0] > 0.99 and cell.median_to_verdict <= 40


@pytest.mark.parametrize(("base", "paired"), [(0.0, True), (0.05, True), (0.0, False)])
def test_corruption_false_fail_stays_under_alpha(base: float, paired: bool) -> None:
    # The least favourable null: the excess over the control (or, without one, the share) equals the ceiling.
    rng = np.random.default_rng(23)
    for icc in (0.0, 0.6):
        for repeats in (1, 3):
            cell = operating.corruption_cell(rng, PATHS, SIZES, base, CEILING, repeats, icc, CEILING, ALPHA, paired)
            assert np.all(cell.fail <= BOUND), (icc, repeats, cell.fail)


def test_corruption_like_the_seed_fails_within_twenty_instances() -> None:
    cell = operating.corruption_cell(np.random.default_rng(2), 500, [20], 0.0, 0.59, 3, 0.3, CEILING, ALPHA)
    assert cell.fail[0] > 0.95
