"""The judgement (eval/canary/judge.py): near-tie flips are benign, sampler and state bugs are corrupted."""

from __future__ import annotations

from typing import Any

from eval.canary.compare import apply_comparison, summarize
from eval.canary.judge import adjusted, judge, self_violation
from eval.canary.records import ProbeRecord


def rec(out: list[int], tops: list[dict[int, float]], params: dict[str, Any] | None = None) -> ProbeRecord:
    return ProbeRecord(
        probe_id="sampler_mix-000-plain",
        cohort="c",
        mode="sampler_mix",
        index=0,
        role="plain",
        prompt_token_ids=[1, 2, 3],
        output_token_ids=out,
        output_token_logprobs=[tops[i][t] for i, t in enumerate(out)],
        output_top_logprobs=[{str(k): v for k, v in t.items()} for t in tops],
        params=params,
    )


def test_identical_output_is_exact() -> None:
    tops = [{7: -0.1, 8: -2.0}, {9: -0.2, 7: -1.5}]
    a, b = rec([7, 9], tops), rec([7, 9], tops)
    apply_comparison(a, b, "ref")
    assert a.judgement is not None and a.judgement["verdict"] == "exact"


def test_a_near_tie_flip_is_benign_and_a_wide_one_is_corrupted() -> None:
    ref = rec([7, 9], [{7: -0.1, 8: -2.0}, {9: -0.60, 5: -0.70}])
    flip = rec([7, 5], [{7: -0.1, 8: -2.0}, {5: -0.64, 9: -0.66}])
    apply_comparison(flip, ref, "ref", near_tie=0.25)
    assert flip.judgement is not None and flip.judgement["verdict"] == "near_tie"
    assert flip.judgement["margin_reference"] == 0.1
    wide = rec([7, 5], [{7: -0.1, 8: -2.0}, {5: -0.1, 9: -3.0}])
    apply_comparison(wide, ref, "ref", near_tie=0.25)
    assert wide.judgement is not None and wide.judgement["verdict"] == "corrupted"


def test_a_token_outside_the_references_top_k_is_corrupted() -> None:
    ref = rec([7, 9], [{7: -0.1, 8: -2.0}, {9: -0.5, 5: -0.6}])
    odd = rec([7, 11], [{7: -0.1, 8: -2.0}, {11: -0.5, 9: -0.55}])
    apply_comparison(odd, ref, "ref", near_tie=0.25)
    assert odd.judgement is not None and odd.judgement["verdict"] == "corrupted"
    assert "outside the top-k" in odd.judgement["reason"] and odd.judgement["margin_reference"] is None


def test_a_penalty_skipped_on_a_draft_row_breaks_self_consistency() -> None:
    """Token 7 again although presence 1.5 + frequency 1.0 make 8 the processed argmax (PR 19482's bug)."""
    params = {"presence_penalty": 1.5, "frequency_penalty": 1.0}
    buggy = rec([7, 7], [{7: -0.1, 8: -2.0}, {7: -0.3, 8: -1.0}], params)
    worst, where = self_violation(buggy)
    assert where == 1 and abs(worst - 1.8) < 1e-9
    ok = rec([7, 8], [{7: -0.1, 8: -2.0}, {7: -0.3, 8: -1.0}], params)
    assert self_violation(ok)[0] == 0.0


def test_a_stop_token_before_min_tokens_is_corrupted() -> None:
    params = {"min_tokens": 4, "stop_token_ids": [9]}
    assert adjusted("9", -0.1, 2, [], params) == float("-inf")
    assert adjusted("9", -0.1, 4, [], params) == -0.1
    early = rec([7, 9], [{7: -0.1, 8: -2.0}, {9: -0.1, 8: -2.0}], params)
    assert judge(early, None, 0.25, 0.5).verdict == "corrupted"


def test_logprobs_of_identical_tokens_must_agree() -> None:
    ref = rec([7, 9], [{7: -0.1, 8: -2.0}, {9: -0.2, 5: -1.5}])
    off = rec([7, 9], [{7: -0.1, 8: -2.0}, {9: -1.2, 5: -2.5}])
    j = judge(off, ref, 0.25, 0.5)
    assert j.verdict == "corrupted" and j.logprob_delta == 1.0


def test_the_summary_counts_judged_corruption_not_divergence() -> None:
    ref = rec([7, 9], [{7: -0.1, 8: -2.0}, {9: -0.60, 5: -0.70}])
    flip = rec([7, 5], [{7: -0.1, 8: -2.0}, {5: -0.64, 9: -0.66}])
    apply_comparison(flip, ref, "ref")
    s = summarize("c", [flip], False, 1)
    assert (s.diverged, s.corrupted, s.near_ties, s.verdict) == (1, 0, 1, "clean")


def test_a_choice_the_reference_made_too_is_not_the_cohorts_fault() -> None:
    """vLLM also masks EOS before min_tokens (not modelled): where spec-off chose the same, nothing is flagged."""
    params = {"min_tokens": 4, "stop_token_ids": [9]}
    tops = [{7: -0.1, 8: -2.0}, {4: -0.5, 8: -0.9}]  # token 4 (EOS) masked by vLLM, chosen 8
    ref, coh = rec([7, 8], tops, params), rec([7, 8], tops, params)
    apply_comparison(coh, ref, "ref")
    assert coh.judgement is not None and coh.judgement["verdict"] == "exact"
    assert judge(coh, None, 0.25, 0.5).verdict == "corrupted"  # without a reference it cannot know


def test_a_tie_outside_the_top_k_is_judged_from_the_other_sides_logprob() -> None:
    """allowed_token_ids: the candidates are rarely in the raw top-k; when both sides list the same distribution
    the other side's logprob of the token stands in (a bf16 tie between two allowed tokens is benign)."""
    params = {"allowed_token_ids": [69, 71]}
    shared = {1: -4.0, 2: -4.1, 3: -4.2}
    ref = rec([69], [{**shared, 69: -4.94}], params)
    coh = rec([71], [{**shared, 71: -4.94}], params)
    apply_comparison(coh, ref, "ref")
    assert coh.judgement is not None and coh.judgement["verdict"] == "near_tie"
    drifted = rec([71], [{1: -1.0, 2: -4.1, 3: -6.2, 71: -4.94}], params)  # another distribution: a state bug
    apply_comparison(drifted, ref, "ref")
    assert drifted.judgement is not None and drifted.judgement["verdict"] == "corrupted"


def test_a_thinking_budget_is_not_modelled_by_the_self_check_whatever_its_value() -> None:
    """The budget forces `</think>` whatever the model's scores: a forced token is not the argmax, so requests
    with any budget (0 and 1 included) are left to the reference comparison."""
    from eval.canary.judge import modelled

    assert modelled({"temperature": 0.0})
    for budget in (0, 1, 7):
        assert not modelled({"temperature": 0.0, "thinking_token_budget": budget})
