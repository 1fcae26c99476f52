"""The anytime-valid sequential test: early FAIL on a big effect, never a point interval, error rates by simulation."""

from __future__ import annotations

import numpy as np

from analysis import betting, sequential
from analysis.sequential import FAIL, PASS, Design, run_paths, simulate_pairs


def test_an_all_zero_sample_passes_only_once_the_capital_excludes_the_margin() -> None:
    # The ideal bet grows by 1/(1 - 0.03) per zero; at C = 0.75 of it the bet needs ~144 instances, not 12.
    decision, used = run_paths(np.zeros((1, 1000)), Design(margin=0.03))
    assert decision[0] == PASS and 99 <= used[0] <= 200
    decision, _ = run_paths(np.zeros((1, 12)), Design(margin=0.03))
    assert decision[0] == sequential.INCONCLUSIVE


def test_bounds_are_never_a_point() -> None:
    out = sequential.monitor(np.zeros(12), Design(margin=0.03))
    assert out.decision == "INCONCLUSIVE" and out.lower < -0.1 and out.upper > 0.1


def test_motivating_effect_fails_early_and_no_effect_never_fails() -> None:
    rng = np.random.default_rng(0)
    design = Design(margin=0.03)
    decision, used = run_paths(simulate_pairs(rng, 1000, 500, 0.3867, 0.038), design)
    assert np.all(decision == FAIL)
    assert np.median(used) <= 40
    decision, _ = run_paths(simulate_pairs(rng, 1000, 500, 0.382, 0.384), design)
    assert np.mean(decision == FAIL) < 0.01
    assert np.mean(decision == PASS) > 0.2


def test_false_fail_rate_at_the_margin_is_bounded_by_alpha() -> None:
    rng = np.random.default_rng(1)
    decision, _ = run_paths(simulate_pairs(rng, 4000, 500, 0.384, 0.354), Design(margin=0.03))
    # 4000 paths: Monte Carlo SE 0.0035 around 0.05
    assert np.mean(decision == FAIL) < 0.06
    assert np.mean(decision == PASS) < 0.06


def test_monitor_reports_where_it_stopped() -> None:
    d = np.clip(np.full(500, 0.35) + np.random.default_rng(2).normal(0, 0.3, 500), -1, 1)
    out = sequential.monitor(d, Design(margin=0.03))
    assert out.decision == "FAIL" and out.instances < 60 and out.of == 500 and out.estimate > 0.2
    assert out.lower > 0.03 and out.upper < 0.5


def test_a_prefix_reaches_the_same_decision_at_the_same_instance() -> None:
    # What makes an early-stopped or resumed run agree with the full analysis.
    d = simulate_pairs(np.random.default_rng(3), 1, 500, 0.3867, 0.038)[0]
    full = sequential.monitor(d, Design(margin=0.03))
    prefix = sequential.monitor(d[: full.instances], Design(margin=0.03))
    assert (prefix.decision, prefix.instances) == (full.decision, full.instances) == ("FAIL", full.instances)


def test_capital_is_a_supermartingale_under_the_null() -> None:
    # E[K_n] <= 1 when the mean equals m: the average capital over many paths stays near or below 1.
    rng = np.random.default_rng(4)
    x = rng.choice([-1 / 3, 0.0, 1 / 3], p=[0.2, 0.5, 0.3], size=(20000, 200))  # mean 1/30
    k = np.exp(betting.log_capital(x, 1 / 30, betting.UP)[:, -1])
    assert k.mean() < 1.1


def test_planning_says_how_many_instances_a_verdict_needs() -> None:
    from analysis import planning

    seed = planning.plan(0.03, 0.05, 0.3867, 0.3487, repeats=3, cap=500)
    assert seed.p_fail > 0.99 and seed.median_instances <= 40
    zeros = planning.plan(0.03, 0.05, 0.0, 0.0, repeats=3, cap=2000)
    assert zeros.p_pass == 1.0 and 99 <= zeros.median_instances <= 200
    assert "this run has 4" in planning.needed_sentence(zeros, 4)
