"""The group-sequential test: calibrated boundaries, early FAIL on a big effect, error rates by simulation."""

from __future__ import annotations

import numpy as np
import pytest

from analysis import sequential
from analysis.sequential import FAIL, PASS, Design, run_paths, simulate_pairs


def test_one_look_reduces_to_the_fixed_sample_one_sided_test() -> None:
    assert sequential.obf_constant((1.0,), 0.05) == pytest.approx(1.645, abs=0.02)


def test_boundaries_fall_towards_the_fixed_sample_value() -> None:
    b = Design(margin=0.03).boundaries()
    assert len(b) == 10 and np.all(np.diff(b) < 0)
    assert 1.645 < b[-1] < 2.0


def test_motivating_effect_fails_early_and_no_effect_never_fails() -> None:
    rng = np.random.default_rng(0)
    design = Design(margin=0.03)
    decision, used = run_paths(simulate_pairs(rng, 1000, 500, 0.3867, 0.038), design)
    assert np.all(decision == FAIL)
    assert np.median(used) <= 100
    decision, _ = run_paths(simulate_pairs(rng, 1000, 500, 0.382, 0.384), design)
    assert np.mean(decision == FAIL) < 0.05
    assert np.mean(decision == PASS) > 0.5


def test_false_fail_rate_at_the_margin_is_bounded_by_alpha() -> None:
    rng = np.random.default_rng(1)
    decision, _ = run_paths(simulate_pairs(rng, 4000, 500, 0.384, 0.354), Design(margin=0.03))
    # 4000 paths: Monte Carlo SE 0.0035 around 0.05
    assert np.mean(decision == FAIL) < 0.062


def test_monitor_reports_where_it_stopped() -> None:
    d = np.full(500, 0.35) + np.random.default_rng(2).normal(0, 0.3, 500)
    out = sequential.monitor(d, Design(margin=0.03))
    assert out.decision == "FAIL" and out.instances in (50, 100) and out.estimate > 0.2
