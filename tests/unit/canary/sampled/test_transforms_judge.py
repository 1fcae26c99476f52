"""Transforms as vLLM 0.32 applies them, the per-draw judge, the draw plan and the reference's logprob parsing."""

from __future__ import annotations

import math

import numpy as np
import pytest

from eval.canary.sampled.draws import FIRST_ID, Draw, plan_draw
from eval.canary.sampled.judge import judge_draw
from eval.canary.sampled.reference import logprob_matrix
from eval.canary.sampled.transforms import SamplingParams, processed_probs
from eval.spec.workloads import SampledWorkload


def _log_softmax(x: list[float]) -> np.ndarray:
    a = np.array(x, dtype=np.float64)
    return a - np.log(np.exp(a - a.max()).sum()) - a.max()


def test_temperature_divides_the_logits() -> None:
    raw = _log_softmax([2.0, 1.0, 0.0])
    p = processed_probs(raw, SamplingParams(temperature=0.5))
    want = np.exp(np.array([4.0, 2.0, 0.0]))
    assert p == pytest.approx(want / want.sum())


def test_top_k_keeps_ties_at_the_kth_value() -> None:
    raw = _log_softmax([3.0, 2.0, 2.0, 1.0])
    p = processed_probs(raw, SamplingParams(top_k=2))
    assert (p > 0).tolist() == [True, True, True, False]  # vLLM masks logits < the k-th largest only


def test_top_p_masks_while_the_ascending_cumulative_sum_is_at_most_one_minus_p() -> None:
    probs = np.array([0.5, 0.3, 0.15, 0.05])
    raw = np.log(probs)
    # ascending cumulative sums 0.05, 0.2, 0.5, 1.0; with p = 0.75 the mask is cumsum <= 0.25: the two smallest go.
    p = processed_probs(raw, SamplingParams(top_p=0.75))
    assert (p > 0).tolist() == [True, True, False, False]
    assert p[:2] == pytest.approx([0.625, 0.375])
    # the largest token always stays
    assert (processed_probs(raw, SamplingParams(top_p=1e-6)) > 0).tolist() == [True, False, False, False]


def test_temperature_applies_before_top_p() -> None:
    raw = np.log(np.array([0.5, 0.3, 0.15, 0.05]))
    cold = processed_probs(raw, SamplingParams(temperature=0.25, top_p=0.8))
    assert (cold > 0).tolist() == [True, False, False, False]  # sharper first, so the nucleus is one token


def test_greedy_temperature_is_refused() -> None:
    with pytest.raises(ValueError):
        SamplingParams(temperature=0.0)


def _draw(output: list[int], params: SamplingParams | None) -> Draw:
    return Draw(index=3, prompt=[11, 12], params=params, seed=5, output=output)


def test_judge_flags_a_token_outside_top_k_and_forgives_a_boundary_tie() -> None:
    ref = np.tile(_log_softmax([3.0, 2.0, 1.0, 1.0 - 1e-6, -5.0]), (3, 1))
    verdict = judge_draw(_draw([0, 3, 4], SamplingParams(top_k=3)), ref, seed=0, support_slack=1e-3, near_tie_nats=0)
    assert verdict.support_violations == [2]
    assert verdict.boundary_ties == [1]
    assert len(verdict.pits) == 1


def test_judge_greedy_rescoring_catches_a_wrong_token_after_a_near_tie() -> None:
    ref = np.array([_log_softmax([1.0, 0.9, -3.0]), _log_softmax([2.0, 0.0, -1.0])])
    verdict = judge_draw(_draw([1, 2], None), ref, seed=0, support_slack=0, near_tie_nats=0.25)
    assert verdict.greedy_violations == [1]  # position 0 is a near tie (0.1 nats), position 1 is 3 nats off


def test_judge_pits_are_reproducible() -> None:
    ref = np.tile(_log_softmax([1.0, 0.5, 0.0]), (4, 1))
    d = _draw([0, 1, 2, 0], SamplingParams())
    assert judge_draw(d, ref, 7, 0, 0).pits == judge_draw(d, ref, 7, 0, 0).pits


def test_plan_varies_seeds_leaves_some_unseeded_and_cycles_settings() -> None:
    cfg = SampledWorkload(reference="ref", unseeded_fraction=0.25, greedy_fraction=0.0)
    draws = [plan_draw(cfg, 512, i) for i in range(400)]
    seeds = [d.seed for d in draws if d.seed is not None]
    assert len(set(seeds)) == len(seeds)
    assert 60 <= sum(d.seed is None for d in draws) <= 140
    assert {d.params.temperature for d in draws if d.params} == {1.0, 0.7}
    assert all(FIRST_ID <= t < 512 for d in draws for t in d.prompt)
    assert plan_draw(cfg, 512, 17) == plan_draw(cfg, 512, 17)


def test_prefix_hit_draws_share_the_warm_prefix_plus_one_token() -> None:
    cfg = SampledWorkload(reference="ref", prefix_hit_fraction=1.0, warm_tokens=160, hit_tokens=128)
    a, b = plan_draw(cfg, 512, 0), plan_draw(cfg, 512, 1)
    assert len(a.prompt) == 129 and a.prompt[:128] == b.prompt[:128]


def test_logprob_matrix_reads_vllm_prompt_logprobs() -> None:
    plp = [None, {"5": {"logprob": -0.1, "rank": 1}}, {"5": {"logprob": -2.0}, "7": {"logprob": -0.2}}]
    m = logprob_matrix(plp, 1, 8)
    assert m.shape == (2, 8)
    assert m[1, 7] == pytest.approx(-0.2) and m[0, 7] == -math.inf


def test_keep_top_drops_the_prompt_tokens_own_entry_outside_the_top_k() -> None:
    from eval.canary.sampled.reference import keep_top

    m = np.array([[-0.5, -1.0, -9.0, -3.0]])  # vLLM returns top-2 plus the prompt token's own (-9.0)
    # Only tokens strictly above the k-th value: a token tied with the k-th may be the sampled one's own extra entry.
    assert keep_top(m, 2).tolist() == [[-0.5, -math.inf, -math.inf, -math.inf]]
    tied = np.array([[-0.5, -1.0, -1.0, -math.inf]])  # top-2 returned (-0.5, -1.0) + the own token, tied at -1.0
    assert keep_top(tied, 2).tolist() == [[-0.5, -math.inf, -math.inf, -math.inf]]
