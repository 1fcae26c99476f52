"""The sampled mode as an oracle of the generated canary (eval/canary/fuzz, /work/coord/API-fuzz.md `Oracle`).

Two halves, because the fuzzer judges its records after the stacks are gone (eval/canary/results.py):
- `rescore_records(records, base_url, model)` runs while a stack is up (the fuzz loop calls it after each case):
  for every judgeable sampled request it re-scores prompt + continuation with prompt logprobs on `base_url`,
  re-applies temperature / top-k / top-p and stores the per-token judgement (PITs, support violations, boundary
  ties) in `record.extra["sampled_pit"]`. Re-scoring is teacher forcing in one prefill: on the cohort's own stack it
  is exact for bugs of the decode path (rejection sampler, draft rows, cached-prefix tails), since prompt
  logprobs never run speculative decoding; bugs of the model's own prefill need the reference stack's URL.
  A server without `max_logprobs: -1` refuses the whole vocabulary (HTTP 400): the record is then re-scored with
  vLLM's default limit, the top `FALLBACK_TOP` (20) per position, which still judges a top-k request with k <= 20
  exactly and a T=1 request without masks through a 'rest' bucket; other settings are counted `inexact`, untested.
- `SampledOracle` feeds those PITs (or, given `reference_url`, PITs it computes itself by re-scoring there) to one
  `SequentialTest` per cohort. Its Finding is `fail` on a support violation or once the e-process crosses
  1/alpha, `pass` once equivalence is shown, `inconclusive` before.
Requests whose other parameters change the distribution (penalties, logit bias, min_tokens, allowed ids, bad words,
structured output, n > 1) are skipped: their exact law is not temperature / top-k / top-p of the raw logits.
Register it for a run (`register(SampledOracle())`) or pass it to `run_cases(..., oracles=[...])`.
"""

from __future__ import annotations

import asyncio
import zlib
from collections.abc import Sequence
from typing import Any

import httpx
import numpy as np

from eval.canary.fuzz.case import Case, Finding
from eval.canary.records import ProbeRecord
from eval.canary.sampled.draws import Draw
from eval.canary.sampled.judge import DrawVerdict, judge_draw
from eval.canary.sampled.reference import ReferenceError, keep_top, logprob_matrix, rescore_sync
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
    "cache_salt",
}
# Not "sampled": the fuzzer's records carry extra["sampled"], a bool (the request samples), which its oracles read.
EXTRA_KEY = "sampled_pit"
FALLBACK_TOP = 20  # vLLM's default max_logprobs: what a server started without `max_logprobs: -1` still answers


def judgeable(params: dict[str, Any]) -> bool:
    """Temperature > 0, one choice, and nothing but temperature / top-k / top-p shaping the law."""
    if not float(params.get("temperature") or 0) > 0 or int(params.get("n") or 1) != 1:
        return False
    return all(k in NEUTRAL or v in (None, 0, 0.0, 1.0, False, [], {}) for k, v in params.items())


def _params(params: dict[str, Any]) -> SamplingParams:
    return SamplingParams(
        temperature=float(params["temperature"]),
        top_p=float(params.get("top_p") or 1.0),
        top_k=int(params["top_k"]) if params.get("top_k") not in (None, -1, 0) else None,
    )


def _judgeable_record(rec: ProbeRecord) -> bool:
    return (
        rec.infra_error is None
        and bool(rec.output_token_ids)
        and rec.prompt_token_ids is not None
        and judgeable(rec.params or {})
    )


def judge_record(rec: ProbeRecord, raw: np.ndarray, seed: int = 0, support_slack: float = 1e-4) -> DrawVerdict:
    """The per-token judgement of one sampled record against re-scored raw logprobs ([positions, vocab])."""
    params = rec.params or {}
    # The PIT's randomization needs its own stream per request: several requests of one case share an index.
    stream = zlib.crc32(f"{rec.cohort}/{rec.probe_id}".encode()) & 0x7FFFFFFF
    draw = Draw(stream, list(rec.prompt_token_ids or []), _params(params), params.get("seed"))
    draw.output = list(rec.output_token_ids or [])
    return judge_draw(draw, raw, seed, support_slack, 0.0)


def _vocab_of(plp: list[Any], output: Sequence[int] = ()) -> int:
    ids = [int(str(t).removeprefix("token_id:")) for row in plp if row for t in row]
    return max([*ids, *output]) + 1


async def _rescore_one(http: httpx.AsyncClient, model: str, prompt: list[int], output: list[int]) -> np.ndarray:
    """Raw logprobs of every output position: the whole vocabulary, or the top FALLBACK_TOP where the server refuses
    it (HTTP 400: `max_logprobs` below the vocabulary)."""
    for k in (-1, FALLBACK_TOP):
        body = {"model": model, "prompt": prompt + output, "max_tokens": 1, "temperature": 0.0, "prompt_logprobs": k}
        resp = await http.post("/v1/completions", json=body)
        if resp.status_code == 400 and k == -1:
            continue
        if resp.status_code != 200:
            raise ReferenceError(f"HTTP {resp.status_code}: {resp.text[:200]}")
        plp = resp.json()["choices"][0].get("prompt_logprobs")
        if not plp or len(plp) != len(prompt) + len(output):
            raise ReferenceError("no prompt logprobs for every position")
        return keep_top(logprob_matrix(plp, len(prompt), _vocab_of(plp, output)), k)
    raise ReferenceError("unreachable")


async def rescore_records(
    records: Sequence[ProbeRecord],
    base_url: str,
    model: str,
    seed: int = 0,
    support_slack: float = 1e-4,
    concurrency: int = 4,
) -> int:
    """Re-score every judgeable sampled record on a live server (full vocabulary, else the top FALLBACK_TOP) and
    store its judgement in `record.extra["sampled_pit"]`; returns how many were judged. A failed re-scoring stores the
    error instead."""
    todo = [r for r in records if _judgeable_record(r)]
    gate = asyncio.Semaphore(concurrency)

    async def one(http: httpx.AsyncClient, rec: ProbeRecord) -> None:
        prompt, output = list(rec.prompt_token_ids or []), list(rec.output_token_ids or [])
        async with gate:
            try:
                raw = await _rescore_one(http, model, prompt, output)
            except (httpx.HTTPError, ReferenceError, KeyError, IndexError, ValueError) as e:
                rec.extra[EXTRA_KEY] = {"error": f"{type(e).__name__}: {e}"[:300], "rescored_on": base_url}
                return
        verdict = judge_record(rec, raw, seed, support_slack)
        rec.extra[EXTRA_KEY] = {**verdict.record(), "rescored_on": base_url}

    async with httpx.AsyncClient(base_url=base_url, timeout=600) as http:
        await asyncio.gather(*(one(http, r) for r in todo))
    return len(todo)


class SampledOracle:
    """Judges sampled requests run-wide, one sequential test per cohort."""

    name = "sampled_pit"

    def __init__(
        self,
        reference_url: str | None = None,
        model: str | None = None,
        vocab: int | None = None,
        seed: int = 0,
        test: SequentialTest | None = None,
        support_slack: float = 1e-4,
    ) -> None:
        self.reference_url, self.model, self.vocab, self.seed = reference_url, model, vocab, seed
        self._template = test
        self.tests: dict[str, SequentialTest] = {}
        # The first decision per cohort, kept: the e-process is anytime-valid at its first crossing, and may fall back
        # below the threshold afterwards (a later setting shifts the other way), which must not undo the FAIL.
        self.decided: dict[str, str] = {}
        self.support_slack = support_slack

    @property
    def test(self) -> SequentialTest:
        """The test of the only (or first) cohort judged so far."""
        return next(iter(self.tests.values())) if self.tests else self._new_test()

    def _new_test(self) -> SequentialTest:
        t = self._template
        return SequentialTest() if t is None else SequentialTest(t.alpha, t.alpha_eq, t.tolerance, t.slack)

    def _verdict(self, rec: ProbeRecord) -> dict[str, Any] | None:
        stored = rec.extra.get(EXTRA_KEY)
        if isinstance(stored, dict):
            return None if "error" in stored else dict(stored)
        if self.reference_url is None or self.model is None or self.vocab is None or not _judgeable_record(rec):
            return None
        with httpx.Client(base_url=self.reference_url, timeout=600) as http:
            prompt, output = list(rec.prompt_token_ids or []), list(rec.output_token_ids or [])
            raw = rescore_sync(http, self.model, prompt, output, self.vocab)
        return judge_record(rec, raw, self.seed, self.support_slack).record()

    def judge(self, case: Case | None, cohort_obs: ProbeRecord, reference_obs: ProbeRecord | None) -> Finding | None:
        verdict = self._verdict(cohort_obs)
        if verdict is None:
            return None
        cohort = cohort_obs.cohort
        test = self.tests.setdefault(cohort, self._new_test())
        violations = list(verdict["support_violations"])
        earlier = self.decided.get(cohort)
        if earlier is None:  # the test stops at its decision: later tokens are not added
            test.add(verdict["pits"])
        test.add_support_violation(len(violations))
        decision = test.decision()
        result = {Decision.FAIL: "fail", Decision.PASS: "pass", Decision.UNDECIDED: "inconclusive"}[decision]
        reason = f"run-wide PIT test of cohort {cohort} {decision.value} after {test.n} tokens"
        if earlier is None and decision is not Decision.UNDECIDED:
            self.decided[cohort] = reason
        if violations:  # a fact of this request, decided or not
            result, reason = "fail", f"support violation at positions {violations}"
        elif earlier is not None:
            result, reason = "inconclusive", f"not tested: the {earlier[:1].lower()}{earlier[1:]} (decided earlier)"
        return Finding(
            oracle=self.name,
            case_id=case.case_id if case is not None else None,
            role=cohort_obs.role,
            verdict=result,
            reason=reason,
            position=violations[0] if violations else None,
            detail=test.summary(),
        )
