"""Clustered statistics: intervals, ICC, McNemar and MDD against values worked out by hand."""

from __future__ import annotations

import numpy as np
import pytest

from analysis import stats


def clustered(y: list[int], m: list[int]) -> stats.Clustered:
    return stats.Clustered([f"i{k}" for k in range(len(y))], np.array(y, float), np.array(m, float))


def test_wilson_matches_the_textbook_value() -> None:
    lo, hi = stats.wilson(0, 10)
    assert lo == 0.0
    assert hi == pytest.approx(0.2775, abs=1e-4)


def test_rate_ci_never_collapses_to_a_point_when_nothing_was_resolved() -> None:
    lo, hi = stats.rate_ci(clustered([0] * 50, [3] * 50))
    assert lo == 0.0 and hi > 0.05


def test_cluster_bootstrap_is_wider_than_iid_when_repeats_agree() -> None:
    # Every instance is all-or-nothing across 3 repeats: 150 units carry the information of 50.
    perfectly_clustered = clustered([3] * 20 + [0] * 30, [3] * 50)
    lo, hi = stats.rate_ci(perfectly_clustered)
    iid_lo, iid_hi = stats.wilson(60, 150)
    assert (hi - lo) > 1.4 * (iid_hi - iid_lo)
    assert lo < 0.4 < hi


def test_sandwich_se_agrees_with_the_bootstrap() -> None:
    rng = np.random.default_rng(0)
    y = rng.binomial(3, rng.beta(0.4, 0.6, 300))
    c = clustered(list(y), [3] * 300)
    idx = stats.bootstrap_indices(300)
    boot_sd = (c.y[idx].sum(1) / c.m[idx].sum(1)).std()
    assert stats.sandwich_se(c) == pytest.approx(boot_sd, rel=0.08)


def test_icc_is_one_for_identical_repeats_and_near_zero_for_independent_ones() -> None:
    assert stats.icc(clustered([3] * 20 + [0] * 30, [3] * 50)) == pytest.approx(1.0)
    rng = np.random.default_rng(1)
    independent = clustered(list(rng.binomial(3, 0.4, 2000)), [3] * 2000)
    assert abs(stats.icc(independent)) < 0.05


def test_mcnemar_exact() -> None:
    assert stats.mcnemar_exact(0, 6) == pytest.approx(2 / 64)
    assert stats.mcnemar_exact(5, 5) == pytest.approx(1.0)
    assert stats.mcnemar_exact(0, 0) == 1.0


def test_mdd_shrinks_with_instances_and_with_icc() -> None:
    base = stats.mdd(500, 3, 0.38, 0.5)
    assert stats.mdd(2000, 3, 0.38, 0.5) == pytest.approx(base / 2)
    assert stats.mdd(500, 3, 0.38, 0.8) < base
    # hand value: (1.96 + 0.8416) * sqrt(2 * .38 * .62 * .5 / 3 / 500)
    assert base == pytest.approx(2.8016 * np.sqrt(2 * 0.38 * 0.62 * 0.5 / 3 / 500), rel=1e-3)


def test_paired_bootstrap_cancels_shared_instance_difficulty() -> None:
    rng = np.random.default_rng(2)
    y = rng.binomial(3, rng.beta(0.3, 0.5, 400))
    a = clustered(list(y), [3] * 400)
    same = stats.paired_bootstrap(a, a)
    assert np.all(same == 0)
