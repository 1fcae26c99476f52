"""The three-way verdict rule on hand-built summaries and comparisons."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from analysis import analyze, corruption
from analysis.corruption import CorruptionTest
from analysis.paired import PairedComparison
from analysis.sequential import Outcome
from analysis.summary import DEFAULT_POLICY, CohortSummary
from analysis.verdict import decide
from store.unit_records import EarlyStopRecord
from tests.fixtures.synth_results import MOTIVATING, make_run


def summary(**kw: Any) -> CohortSummary:
    base = CohortSummary(
        name="mtp", label="MTP", factors={}, factor_labels={}, columns={}, control="off", policy=dict(DEFAULT_POLICY),
        units=1500, graded=1500, resolved=576, accuracy=0.384, infra_failures=0, ungraded=0, classified=1500,
        corrupted_trajectories=0, labels={}, probes_total=32, probes_compared=32, probes_diverged=0, probes_infra=0,
    )  # fmt: skip
    return replace(base, **kw)


def comparison(lo: float, hi: float) -> PairedComparison:
    """A comparison whose sequential test ended as its bounds say (PASS: hi < margin, FAIL: lo > margin)."""
    decision = "PASS" if hi < 0.03 else "FAIL" if lo > 0.03 else "INCONCLUSIVE"
    seq = Outcome(decision, 500 if decision == "INCONCLUSIVE" else 300, 500, (lo + hi) / 2, lo, hi)
    return PairedComparison(
        cohort="mtp", control="off", instances=500, repeats=3, rate_cohort=0.38, rate_control=0.38, diff=0.0,
        diff_ci95=(-hi, -lo), drop_ci=(lo, hi), drop_ci_level=0.9, se=0.01, mdd=0.04, icc=0.35, sequential=seq,
    )  # fmt: skip


def excess(excess: float, lower: float, significant: bool, paired: bool = True) -> CorruptionTest:
    return CorruptionTest(500, excess, lower, significant, 40 if significant else None, paired)


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


def test_corruption_above_ceiling_fails_only_when_significant() -> None:
    s = summary(corrupted_trajectories=45, control=None, corruption_test=excess(0.03, 0.021, True, paired=False))
    verdict, reason = decide(s, None)
    assert verdict == "FAIL" and "3.00% > ceiling 2.00%" in reason and "significant after 40 instances" in reason
    s = replace(s, corruption_test=excess(0.03, 0.01, False, paired=False))
    verdict, reason = decide(s, None)
    assert verdict == "INCONCLUSIVE" and "above the ceiling 2.00% but not significantly" in reason
    assert "cannot tell yet" in reason


def test_inconclusive_accuracy_says_how_many_instances_a_verdict_needs() -> None:
    cmp = replace(comparison(-0.01, 0.04), rate_control=0.38, rate_cohort=0.38, icc=0.35)
    verdict, reason = decide(summary(), cmp)
    assert verdict == "INCONCLUSIVE" and "cannot tell yet" in reason
    assert "a verdict would need" in reason and "this run has 500" in reason


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
    s = summary(corrupted_trajectories=165, control_corruption_rate=0.10, corruption_test=excess(0.01, -0.02, False))
    verdict, reason = decide(s, comparison(-0.02, 0.02))
    assert verdict == "PASS" and "off 10.00%: excess +1.00 pts <= ceiling 2.00 pts" in reason
    s = summary(corrupted_trajectories=195, control_corruption_rate=0.10, corruption_test=excess(0.03, 0.021, True))
    verdict, reason = decide(s, comparison(-0.02, 0.02))
    assert verdict == "FAIL" and "excess +3.00 pts > ceiling 2.00 pts" in reason


def test_corruption_without_a_control_is_judged_on_its_own_share() -> None:
    s = summary(control=None, corrupted_trajectories=150, corruption_test=excess(0.10, 0.07, True, paired=False))
    verdict, reason = decide(s, None)
    assert verdict == "FAIL" and "10.00% > ceiling 2.00%" in reason


def test_zero_of_twelve_against_zero_of_twelve_is_inconclusive_not_pass(tmp_path: Path) -> None:
    # The demo's SmolLM2 case: nothing resolved on either side says nothing about a 3-point drop yet.
    cohorts = [c for c in MOTIVATING if c.name in ("patched-off", "patched-mtp5")]
    run = make_run(tmp_path / "zeros", cohorts=cohorts, instances=4, resolved_counts={c.name: 0 for c in cohorts})
    s = analyze(run).summaries["patched-mtp5"]
    assert s.verdict == "INCONCLUSIVE", s.reason
    assert "0.00 pts (90% confidence sequence -" in s.reason
    need = re.search(r"a verdict would need about ([\d,]+) instances", s.reason or "")
    assert need and 99 <= int(need.group(1).replace(",", "")) <= 200 and "this run has 4" in (s.reason or "")


def units(cohort: str, flagged: list[int], instances: int = 4, repeats: int = 3) -> pd.DataFrame:
    """Classified trajectories of one cohort; `flagged` lists the (instance, repeat) slots that are corrupted."""
    rows = [
        {"cohort": cohort, "instance_id": f"i{i}", "classified": True, "corrupted": i * repeats + r in flagged}
        for i in range(instances)
        for r in range(repeats)
    ]
    return pd.DataFrame(rows)


def test_one_flagged_trajectory_more_than_the_control_is_not_a_fail_nor_a_pass() -> None:
    # 12 trajectories each: one more flagged trajectory is an 8-point excess, and one classifier false positive.
    df = pd.concat([units("off", []), units("mtp", [5])])
    t = corruption.excess_test(df, "mtp", "off", 0.02, 0.05)
    assert t is not None and t.paired and not t.significant and t.excess == pytest.approx(1 / 12)
    s = summary(corrupted_trajectories=1, classified=12, control_corruption_rate=0.0, corruption_test=t)
    verdict, reason = decide(s, comparison(-0.02, 0.02))
    assert verdict == "INCONCLUSIVE" and "1/12 = 8.33%" in reason and "not significantly" in reason


def test_a_cohort_corrupting_most_trajectories_fails_within_a_few_instances() -> None:
    df = pd.concat([units("off", [], instances=20), units("mtp", [*range(0, 60, 2), 1, 7, 13], instances=20)])
    t = corruption.excess_test(df, "mtp", "off", 0.02, 0.05)
    assert t is not None and t.significant and t.decided_at is not None and t.decided_at <= 12 and t.lower > 0.02


def test_an_early_stopped_cohort_quotes_one_bound_and_says_what_it_is() -> None:
    # The stopper's record holds the bounds of the moment it asked (here -14.90 .. +14.90 at instance 27); the
    # reason quotes only the confidence sequence over every instance graded, once (issue 31: two different bounds).
    said = "PASS decided at instance 27 of 30 in the shared order (drop bounds -14.90 .. +14.90 pts)"
    stop = EarlyStopRecord(cohort="mtp", control="off", decision="PASS", decided_at=27, planned=30, lower=-0.149,
                           upper=0.149, margin=0.03, alpha=0.05, stopped_at="2026-12-05T00:00:00+00:00",
                           units_finished_when_asked=81, reason=said)  # fmt: skip
    verdict, reason = decide(summary(early_stop=stop), comparison(-0.02, 0.02))
    assert verdict == "PASS"
    assert "rollouts stopped early: PASS decided at instance 27 of 30 in the shared order" in reason
    assert "14.90" not in reason and "drop bounds" not in reason
    bounds = re.findall(r"[-+]\d+\.\d\d pts \.\. [-+]\d+\.\d\d pts", reason)
    assert bounds == ["-2.00 pts .. +2.00 pts"], reason
    assert "90% confidence sequence -2.00 pts .. +2.00 pts: the anytime-valid bounds of the drop over the 500" in reason


def test_a_soak_result_is_evidence_in_the_verdict() -> None:
    """uptime.json weighs like the canary (analysis/uptime_evidence.py), read from the kept soak runs of
    benchmarks/uptime/runs/up-bf16-c2: the PR 48132 revert FAILs, its clean controls PASS, and a soak that
    exercised nothing is INCONCLUSIVE, never PASS."""
    runs = Path(__file__).resolve().parents[3] / "benchmarks" / "uptime" / "runs" / "up-bf16-c2"
    revert = json.loads((runs / "pr48132-mtp5" / "uptime.json").read_text())
    clean = json.loads((runs / "fixed-mtp5-r1" / "uptime.json").read_text())
    assert revert["verdict"] == "uptime-corruption" and clean["verdict"] == "clean"
    verdict, reason = decide(summary(uptime=revert), comparison(-0.02, 0.02))
    assert verdict == "FAIL" and "uptime: corruption that grows with uptime" in reason
    assert decide(summary(uptime=clean), comparison(-0.02, 0.02))[0] == "PASS"
    blind = {**clean, "verdict": "not-exercised", "reasons": ["the acceptance monitor tested no window"]}
    verdict, reason = decide(summary(uptime=blind), comparison(-0.02, 0.02))
    assert verdict == "INCONCLUSIVE" and "exercised nothing" in reason
