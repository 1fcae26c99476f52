"""The three-way verdict rule on hand-built summaries and comparisons."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from analysis.paired import PairedComparison
from analysis.summary import DEFAULT_POLICY, CohortSummary
from analysis.verdict import decide


def summary(**kw: Any) -> CohortSummary:
    base = CohortSummary(
        name="mtp", label="MTP", factors={}, factor_labels={}, columns={}, control="off", policy=dict(DEFAULT_POLICY),
        units=1500, graded=1500, resolved=576, accuracy=0.384, infra_failures=0, ungraded=0, classified=1500,
        corrupted_trajectories=0, labels={}, probes_total=32, probes_compared=32, probes_diverged=0, probes_infra=0,
    )  # fmt: skip
    return replace(base, **kw)


def comparison(lo: float, hi: float) -> PairedComparison:
    return PairedComparison(
        cohort="mtp", control="off", instances=500, repeats=3, rate_cohort=0.38, rate_control=0.38, diff=0.0,
        diff_ci95=(-hi, -lo), drop_ci=(lo, hi), drop_ci_level=0.9, se=0.01, mdd=0.04,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("lo", "hi", "expected"),
    [(-0.02, 0.02, "PASS"), (0.05, 0.09, "FAIL"), (-0.01, 0.04, "INCONCLUSIVE"), (0.01, 0.05, "INCONCLUSIVE")],
)
def test_non_inferiority_three_way(lo: float, hi: float, expected: str) -> None:
    verdict, reason = decide(summary(), comparison(lo, hi))
    assert verdict == expected
    assert "margin 3.00 pts" in reason


def test_diverged_canary_fails_even_when_accuracy_is_fine() -> None:
    verdict, reason = decide(summary(probes_diverged=1, first_divergences=[1]), comparison(-0.02, 0.02))
    assert verdict == "FAIL"
    assert "1/32 probes diverged" in reason and "index 1" in reason


def test_divergence_is_advisory_when_policy_allows_it() -> None:
    policy = {**DEFAULT_POLICY, "canary_must_be_clean": False}
    verdict, _ = decide(summary(probes_diverged=3, policy=policy), comparison(-0.02, 0.02))
    assert verdict == "PASS"


def test_corruption_above_ceiling_fails() -> None:
    verdict, reason = decide(summary(corrupted_trajectories=45), comparison(-0.02, 0.02))
    assert verdict == "FAIL" and "3.00% > ceiling 2.00%" in reason


def test_too_many_infra_failures_is_inconclusive_not_fail() -> None:
    verdict, reason = decide(summary(infra_failures=100, graded=1400), comparison(0.05, 0.09))
    assert verdict == "INCONCLUSIVE"
    assert "100 infra failures" in reason and "accuracy not judged" in reason


def test_control_without_a_control_says_so() -> None:
    verdict, reason = decide(summary(control=None, probes_compared=0, probes_diverged=0), None)
    assert verdict == "PASS"
    assert "no control" in reason and "reference cohort" in reason


def test_canary_only_cohort_rests_on_the_canary() -> None:
    s = summary(units=None, graded=None, resolved=None, accuracy=None, infra_failures=None, classified=None,
                corrupted_trajectories=None, labels=None)  # fmt: skip
    verdict, reason = decide(s, None)
    assert verdict == "PASS" and "rests on the canary" in reason
    verdict, _ = decide(replace(s, probes_diverged=4), None)
    assert verdict == "FAIL"


def test_all_probes_failing_on_infra_is_inconclusive() -> None:
    s = summary(units=None, classified=None, probes_compared=0, probes_infra=32)
    assert decide(s, None)[0] == "INCONCLUSIVE"


def test_a_cohort_with_nothing_recorded_is_inconclusive() -> None:
    s = summary(units=None, classified=None, probes_total=None, probes_compared=None, probes_diverged=None)
    verdict, reason = decide(s, None)
    assert verdict == "INCONCLUSIVE" and "nothing to judge" in reason


def test_a_comparison_on_too_few_shared_instances_is_inconclusive() -> None:
    cmp = replace(comparison(-0.02, 0.02), instances=400, instances_union=500)
    verdict, reason = decide(summary(), cmp)
    assert verdict == "INCONCLUSIVE" and "only 400 of 500 instances" in reason
    assert decide(summary(), replace(cmp, instances_union=410))[0] == "PASS"


def test_a_server_that_dies_on_the_canary_fails_and_says_why() -> None:
    s = summary(
        units=None, probes_compared=0, probes_infra=56, probes_total=56, control=None,
        server_error="IndexError: index 2 is out of bounds for dimension 0 with size 1",
    )  # fmt: skip
    verdict, reason = decide(s, None)
    assert verdict == "FAIL"
    assert "server failed 56/56 requests" in reason and "IndexError" in reason


def test_unanswered_probes_without_a_server_error_stay_inconclusive() -> None:
    s = summary(units=None, probes_compared=0, probes_infra=56, probes_total=56, control=None)
    verdict, reason = decide(s, None)
    assert verdict == "INCONCLUSIVE" and "failed on infrastructure" in reason


def test_corruption_with_a_control_is_judged_on_the_excess_over_it() -> None:
    # The control itself loops in 10% of trajectories: the cohort adds 1 point, under the 2-point ceiling.
    verdict, reason = decide(summary(corrupted_trajectories=165, control_corruption_rate=0.10), comparison(-0.02, 0.02))
    assert verdict == "PASS" and "off 10.00%: excess +1.00 pts <= ceiling 2.00 pts" in reason
    verdict, reason = decide(summary(corrupted_trajectories=195, control_corruption_rate=0.10), comparison(-0.02, 0.02))
    assert verdict == "FAIL" and "excess +3.00 pts > ceiling 2.00 pts" in reason


def test_corruption_without_a_control_is_judged_on_its_own_share() -> None:
    verdict, reason = decide(summary(control=None, corrupted_trajectories=150), None)
    assert verdict == "FAIL" and "10.00% > ceiling 2.00%" in reason
