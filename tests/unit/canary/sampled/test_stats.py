"""The sampled mode's statistics: PIT uniformity under the null, false alarms bounded, power, equivalence."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from eval.canary.sampled.stats import Decision, SequentialTest, kt_log_e, normal_mixture_radius, randomized_pit


def _dist(rng: np.random.Generator, vocab: int = 32) -> np.ndarray:
    top = rng.uniform(0.2, 0.9)
    return np.concatenate([[top], rng.dirichlet(np.ones(vocab - 1) * 0.3) * (1 - top)])


def _shift(p: np.ndarray, d: float) -> np.ndarray:
    q = p.copy()
    top = int(np.argmax(p))
    q[top] = min(1.0, p[top] + d)
    rest = np.arange(p.size) != top
    q[rest] *= (1 - q[top]) / p[rest].sum()
    return q


def _pits(rng: np.random.Generator, n: int, d: float = 0.0) -> list[float]:
    out = []
    for _ in range(n):
        p = _dist(rng)
        q = _shift(p, d) if d else p
        u = randomized_pit(p, int(rng.choice(p.size, p=q)), float(rng.random()))
        assert u is not None
        out.append(u)
    return out


def test_pit_is_uniform_when_tokens_come_from_the_reference() -> None:
    rng = np.random.default_rng(0)
    assert sps.kstest(_pits(rng, 4000), "uniform").pvalue > 0.01


def test_pit_of_a_shifted_source_is_not_uniform_and_moves_toward_zero() -> None:
    rng = np.random.default_rng(1)
    u = np.array(_pits(rng, 4000, d=0.1))
    assert sps.kstest(u, "uniform").pvalue < 1e-6
    assert u.mean() < 0.5 - 0.03  # mass moved to the most likely token: a shift of d moves the mean by d/2


def test_pit_orders_by_descending_probability_with_ties_by_id() -> None:
    p = np.array([0.1, 0.4, 0.4, 0.1, 0.0])
    assert randomized_pit(p, 1, 0.0) == pytest.approx(0.0)
    assert randomized_pit(p, 2, 0.5) == pytest.approx(0.4 + 0.2)
    assert randomized_pit(p, 3, 1.0) == pytest.approx(1.0)
    assert randomized_pit(p, 4, 0.5) is None  # outside the support


def test_kt_e_value_is_one_before_any_data_and_large_for_a_skewed_histogram() -> None:
    assert kt_log_e(np.zeros(4, dtype=np.int64)) == pytest.approx(0.0)
    assert kt_log_e(np.array([400, 100, 100, 100])) > np.log(1e6)


def test_false_alarms_stay_below_alpha_when_looking_after_every_batch() -> None:
    rng = np.random.default_rng(2)
    fails = 0
    runs = 200
    for _ in range(runs):
        test = SequentialTest(alpha=0.05, tolerance=1e-9)  # never PASS: look the whole way
        for _ in range(20):
            test.add(rng.random(100))
            if test.decision() is Decision.FAIL:
                fails += 1
                break
    # Ville bounds the rate by 0.05 at every look; with 200 runs, 17 would be > 2.5 sd above it.
    assert fails <= 17


def test_a_three_point_shift_on_most_tokens_fails_within_twenty_thousand_tokens() -> None:
    rng = np.random.default_rng(3)
    test = SequentialTest(alpha=0.05, tolerance=0.02)
    while test.decision() is Decision.UNDECIDED and test.n < 20000:
        test.add(_pits(rng, 250, d=0.03))
    assert test.decision() is Decision.FAIL


def test_clean_streams_pass_once_the_confidence_sequence_excludes_the_tolerance() -> None:
    rng = np.random.default_rng(4)
    test = SequentialTest(tolerance=0.05)
    test.add(rng.random(200))
    assert test.decision() is Decision.UNDECIDED
    test.add(rng.random(8000))
    assert test.decision() is Decision.PASS
    lower, upper = test.tv_bounds()
    assert lower <= test.tv_hat() <= upper <= 0.05


def test_a_support_violation_fails_at_once() -> None:
    test = SequentialTest()
    test.add_support_violation()
    assert test.decision() is Decision.FAIL


def test_slack_keeps_a_small_shift_from_failing_but_not_a_large_one() -> None:
    rng = np.random.default_rng(5)
    small = SequentialTest(slack=0.05, tolerance=0.1)
    small.add(_pits(rng, 6000, d=0.02))
    assert small.decision() is not Decision.FAIL
    large = SequentialTest(slack=0.05)
    large.add(np.minimum(rng.random(6000) * 0.6, 1.0))  # 40% of the mass moved off [0.6, 1)
    assert large.decision() is Decision.FAIL


def test_confidence_radius_shrinks_with_n() -> None:
    assert normal_mixture_radius(0, 0.05, 250) == float("inf")
    assert normal_mixture_radius(1000, 0.05, 250) > normal_mixture_radius(10000, 0.05, 250)
