"""The qualification verdict counts probes judged corrupted, not token-level differences (issue 16)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from analysis.summary import DEFAULT_POLICY, CohortSummary
from analysis.verdict import decide


def canary_only(**kw: Any) -> CohortSummary:
    base = CohortSummary(
        name="mtp", label="MTP", factors={}, factor_labels={}, columns={}, control="off", policy=dict(DEFAULT_POLICY),
        probes_total=32, probes_compared=32, probes_diverged=3, probes_infra=0,
    )  # fmt: skip
    return replace(base, **kw)


def test_benign_near_tie_flips_pass() -> None:
    verdict, reason = decide(canary_only(probes_corrupted=0, probes_near_ties=3), None)
    assert verdict == "PASS"
    assert "0/32 probes judged corrupted" in reason and "3 benign near-tie flips" in reason


def test_a_judged_corruption_fails_with_its_reason() -> None:
    s = canary_only(
        probes_corrupted=1, probes_near_ties=2, first_divergences=[4],
        probe_corruption_reason="sampler_mix-000-penalties: token 4 is not the argmax",
    )  # fmt: skip
    verdict, reason = decide(s, None)
    assert verdict == "FAIL"
    assert "1/32 probes judged corrupted (3 diverged)" in reason and "not the argmax" in reason
