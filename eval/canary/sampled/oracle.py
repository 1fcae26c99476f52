"""The sampled mode as an oracle of the generated canary (eval/canary/fuzz, /work/coord/API-fuzz.md `Oracle`).

`SampledOracle(reference_url, model, vocab)` judges each sampled request of fuzz cases: it re-scores the cohort's
continuation on the reference (full-vocabulary prompt logprobs), re-applies temperature / top-k / top-p and feeds
every token's PIT to one run-wide `SequentialTest`. Its Finding is `fail` on a support violation or once the
e-process crosses 1/alpha, `pass` once equivalence is shown, `inconclusive` before. Requests whose other
parameters change the distribution (penalties, logit bias, min_tokens, allowed ids, bad words, structured output,
n > 1) are skipped: their exact law is not temperature / top-k / top-p of the raw logits. Pass it to
`run_cases(..., oracles=[*default_oracles(...), SampledOracle(...)])` or `register()` it for a run.
"""

from __future__ import annotations

from typing import Any

import httpx

from eval.canary.fuzz.case import Case, Finding
from eval.canary.records import ProbeRecord
from eval.canary.sampled.draws import Draw
from eval.canary.sampled.judge import judge_draw
from eval.canary.sampled.reference import rescore_sync
from eval.canary.sampled.stats import Decision, SequentialTest
from eval.canary.sampled.transforms import SamplingParams

NEUTRAL = {
    "temperature",
    "top_p",
    "top_k",
    "seed",
    "max_tokens",
    "ignore_eos",
    "logprobs",
    "stream",
    "stop",
    "include_stop_str_in_output",
    "return_token_ids",
    "return_tokens_as_token_ids",
    "prompt_logprobs",
    "n",
}


def judgeable(params: dict[str, Any]) -> bool:
    """Temperature > 0, one choice, and nothing but temperature / top-k / top-p shaping the law."""
    if not float(params.get("temperature") or 0) > 0 or int(params.get("n") or 1) != 1:
        return False
    return all(k in NEUTRAL or v in (None, 0, 0.0, 1.0, False, [], {}) for k, v in params.items())


class SampledOracle:
    name = "sampled_pit"

    def __init__(
        self,
        reference_url: str,
        model: str,
        vocab: int,
        seed: int = 0,
        test: SequentialTest | None = None,
        support_slack: float = 1e-4,
    ) -> None:
        self.reference_url, self.model, self.vocab, self.seed = reference_url, model, vocab, seed
        self.test = test or SequentialTest()
        self.support_slack = support_slack
        self._count = 0

    def judge(self, case: Case | None, cohort_obs: ProbeRecord, reference_obs: ProbeRecord | None) -> Finding | None:
        params = cohort_obs.params or {}
        if not judgeable(params) or not cohort_obs.output_token_ids or cohort_obs.prompt_token_ids is None:
            return None
        sp = SamplingParams(
            temperature=float(params["temperature"]),
            top_p=float(params.get("top_p") or 1.0),
            top_k=int(params["top_k"]) if params.get("top_k") not in (None, -1, 0) else None,
        )
        draw = Draw(self._count, list(cohort_obs.prompt_token_ids), sp, params.get("seed"))
        draw.output = list(cohort_obs.output_token_ids)
        self._count += 1
        with httpx.Client(base_url=self.reference_url, timeout=600) as http:
            ref = rescore_sync(http, self.model, draw.prompt, draw.output, self.vocab)
        verdict = judge_draw(draw, ref, self.seed, self.support_slack, 0.0)
        self.test.add(verdict.pits)
        self.test.add_support_violation(len(verdict.support_violations))
        decision = self.test.decision()
        case_id = case.case_id if case is not None else None
        result = {Decision.FAIL: "fail", Decision.PASS: "pass", Decision.UNDECIDED: "inconclusive"}[decision]
        reason = (
            f"support violation at positions {verdict.support_violations}"
            if verdict.support_violations
            else f"run-wide PIT test {decision.value} after {self.test.n} tokens"
        )
        position = verdict.support_violations[0] if verdict.support_violations else None
        return Finding(
            oracle=self.name,
            case_id=case_id,
            role=cohort_obs.role,
            verdict=result,
            reason=reason,
            position=position,
            detail=self.test.summary(),
        )
