"""Greedy re-scoring of the fuzz cases (issue 28 item 4): every token of a greedy output must be the argmax at its own
prefix, up to a near tie, under a prefill of prompt + output.

The `reference` oracle compares a greedy output with the reference's token by token and stops at the first benign
near-tie flip: after it the two continuations no longer share a context. A bug that starts with a near tie (a state bug
whose first corrupted token is close to the right one) then corrupts the rest of the output unseen. Re-scoring closes
that gap. While the stack is up, `rescore_greedy` sends each judgeable greedy record's prompt + output to the same
server as one prompt with `prompt_logprobs: 1` (teacher forcing in one prefill: row t holds the logprob of the token the
server chose at t and of the top-1 token given exactly the prefix it had). Prompt logprobs never run speculative
decoding and a request asking for them is never served from the prefix cache (vllm/sampling_params.py of 0.32.0:
`skip_reading_prefix_cache` defaults to true when `prompt_logprobs` is set), so on the cohort's own stack they are the
target model's distribution, exact for bugs of the decode path (drafts, rejection, state rollback, batch rows).
`GreedyRescoreOracle` judges later, from what was stored in `record.extra["greedy_rescore"]`: a token that loses to the
argmax by more than the threshold (`workloads.canary.fuzz_rescore_nats`, 1.0) fails. A record the speculation-off
reference fails the same way is a fact about the build (oracles._shared).

Only requests whose argmax is the raw model's are judged: temperature 0, one choice, a prompt given as token ids,
no penalty, bias, mask, minimum length or structured output (those change the argmax; their own oracles check
them). P/D stacks are not re-scored: prompt logprobs through a P/D proxy kill the decode workers (vllm#50792,
docs/findings.md).
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from typing import Any

import httpx

from eval.canary.fuzz.case import Case, Finding
from eval.canary.judge import forces_tokens
from eval.canary.records import ProbeRecord

EXTRA_KEY = "greedy_rescore"

# Parameters that leave the greedy argmax alone (stop conditions, output format, sampling knobs that greedy ignores).
_NEUTRAL = {
    "temperature",
    "top_p",
    "top_k",
    "min_p",
    "seed",
    "max_tokens",
    "max_completion_tokens",
    "ignore_eos",
    "logprobs",
    "top_logprobs",
    "prompt_logprobs",
    "stream",
    "stream_options",
    "stream_interval",
    "stop",
    "stop_token_ids",
    "include_stop_str_in_output",
    "skip_special_tokens",
    "spaces_between_special_tokens",
    "return_token_ids",
    "return_tokens_as_token_ids",
    "cache_salt",
    "n",
    "echo",
    "user",
    "priority",
    "request_id",
}
_DEFAULTS: tuple[Any, ...] = (None, 0, 0.0, 1.0, False, [], {}, "")


def greedy_judgeable(params: dict[str, Any]) -> bool:
    """Temperature 0 (explicit), one choice, and nothing that moves the argmax away from the raw model's.

    A parameter that forces tokens (a thinking budget) does so at any value, 0 included, so it is never read as a
    default: the token it forces is not the raw model's argmax.
    """
    if forces_tokens(params):
        return False
    if params.get("temperature") is None or float(params["temperature"]) != 0.0 or int(params.get("n") or 1) != 1:
        return False
    for key, value in params.items():
        if key in _NEUTRAL or value in _DEFAULTS:
            continue
        if key == "response_format" and isinstance(value, dict) and value.get("type") in (None, "text"):
            continue
        if key == "tool_choice" and value in ("auto", "none"):
            continue
        if key == "tools" and params.get("tool_choice") in (None, "auto", "none"):
            continue
        return False
    return True


def rescorable(rec: ProbeRecord) -> bool:
    return (
        rec.infra_error is None
        and not rec.extra.get("sampled")
        and bool(rec.output_token_ids)
        and bool(rec.prompt_token_ids)
        and greedy_judgeable(rec.params or {})
    )


def _row_logprobs(row: dict[str, Any] | None) -> dict[int, float]:
    if not row:
        return {}
    out: dict[int, float] = {}
    for tok, entry in row.items():
        lp = entry.get("logprob") if isinstance(entry, dict) else entry
        if lp is not None:
            out[int(str(tok).removeprefix("token_id:"))] = float(lp)
    return out


def judge_rows(output: Sequence[int], rows: Sequence[dict[str, Any] | None], max_loss_nats: float) -> dict[str, Any]:
    """Per output position: the chosen token's logprob against the best one. Returns the stored judgement."""
    violations: list[int] = []
    margins: list[float] = []
    for t, token in enumerate(output):
        lps = _row_logprobs(rows[t] if t < len(rows) else None)
        if token not in lps:
            raise ValueError(f"position {t}: the chosen token {token} has no prompt logprob")
        margin = max(lps.values()) - lps[token]
        margins.append(margin)
        if margin > max_loss_nats:
            violations.append(t)
    worst = max(margins, default=0.0)
    return {
        "positions": len(output),
        "violations": violations,
        "margin_at_first": round(margins[violations[0]], 5) if violations else None,
        "max_margin": round(worst, 5) if math.isfinite(worst) else None,
        "near_ties": sum(1 for m in margins if 0 < m <= max_loss_nats),
        "max_loss_nats": max_loss_nats,
    }


async def _rows(http: httpx.AsyncClient, model: str, prompt: list[int], output: list[int]) -> list[Any]:
    body = {"model": model, "prompt": prompt + output, "max_tokens": 1, "temperature": 0.0, "prompt_logprobs": 1}
    resp = await http.post("/v1/completions", json=body)
    if resp.status_code != 200:
        raise ValueError(f"HTTP {resp.status_code}: {resp.text[:200]}")
    plp = resp.json()["choices"][0].get("prompt_logprobs")
    if not plp or len(plp) != len(prompt) + len(output):
        raise ValueError("no prompt logprobs for every position")
    return list(plp[len(prompt) :])


async def rescore_greedy(
    records: Sequence[ProbeRecord], base_url: str, model: str, max_loss_nats: float, concurrency: int = 4
) -> int:
    """Re-score every judgeable greedy record on a live server; store the judgement (or the error) in
    `record.extra["greedy_rescore"]`. Returns how many were re-scored."""
    todo = [r for r in records if rescorable(r)]
    gate = asyncio.Semaphore(concurrency)

    async def one(http: httpx.AsyncClient, rec: ProbeRecord) -> None:
        output = list(rec.output_token_ids or [])
        async with gate:
            try:
                rows = await _rows(http, model, list(rec.prompt_token_ids or []), output)
                rec.extra[EXTRA_KEY] = judge_rows(output, rows, max_loss_nats)
            except (httpx.HTTPError, KeyError, IndexError, ValueError) as e:
                rec.extra[EXTRA_KEY] = {"error": f"{type(e).__name__}: {e}"[:300]}

    async with httpx.AsyncClient(base_url=base_url, timeout=600) as http:
        await asyncio.gather(*(one(http, r) for r in todo))
    return len(todo)


class GreedyRescoreOracle:
    """Judges what `rescore_greedy` stored: fail on a token that loses to the prefill's argmax by more than the
    near tie; nothing to say about a record that was not re-scored (or whose re-scoring failed: infra)."""

    name = "rescore"

    def judge(self, case: Case | None, cohort_obs: ProbeRecord, reference_obs: ProbeRecord | None) -> Finding | None:
        stored = cohort_obs.extra.get(EXTRA_KEY)
        if not isinstance(stored, dict) or "error" in stored:
            return None
        violations = list(stored.get("violations") or [])
        if violations:
            reason = (
                f"{len(violations)} of {stored['positions']} tokens are not the argmax of the server's own prefill "
                f"of prompt + output (first at position {violations[0]}, losing by {stored['margin_at_first']} nats "
                f"> {stored['max_loss_nats']})"
            )
            return Finding(
                oracle=self.name, role=cohort_obs.role, verdict="fail", reason=reason, position=violations[0]
            )
        return Finding(
            oracle=self.name,
            role=cohort_obs.role,
            verdict="pass",
            reason=f"every token is the prefill's argmax up to a near tie ({stored['near_ties']} near ties)",
        )
