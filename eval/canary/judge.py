"""The canary's judgement: is a probe's output corrupted, or only different? (issue 16)

Token equality with the reference is the sharpest evidence, and stays: an exact match is clean. But in bfloat16
greedy output depends on batch composition (exact ties, different reduction orders), so a clean build differs
from the reference now and then. Every completion therefore asks for its top-k logprobs (raw, vLLM's default
`logprobs_mode`), and a difference is judged with three checks, all from what the servers returned:

1. **Self-consistency**: from the first divergence on (everywhere without a reference: before it, the
   reference made the same choices) the chosen token of a greedy request must be the argmax of the *processed*
   distribution. The judge knows the request's parameters and re-applies them to the returned raw logprobs
   (tokens outside `allowed_token_ids` masked; presence and frequency penalties from the request's own earlier
   output; stop tokens masked before `min_tokens`). A chosen token that loses to another by more than
   `SELF_TOLERANCE` nats is a sampler bug: a processor skipped on draft rows, or logprobs returned after
   processing. Repetition penalty, bad words and the EOS that vLLM also masks before `min_tokens` are not
   modelled (the probes send none of the first two; the third is why the agreeing prefix is exempt).
2. **Logprobs**: while the tokens agree, the chosen tokens' logprobs must agree with the reference's within
   `logprob_tolerance` (numerical noise is far smaller; the PR #30846 bug returns penalised logprobs).
3. **The first divergence**: both sides share the prefix, so the reference's top-k at that position is the
   reference's distribution for the very context the cohort saw. A benign flip is a near-tie on both sides:
   the reference ranks the cohort's token within `near_tie_nats` of its own choice, and the cohort ranks the
   reference's token within `near_tie_nats` of its choice. A token outside the other side's top-k, or a wider
   margin, is corruption. After a benign flip the continuations are no longer comparable; check 1 still runs
   on the rest of the cohort's output.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from eval.canary.records import ProbeRecord

SELF_TOLERANCE = 1e-3  # the returned logprobs and the argmax come from the same float32 logits
INF = math.inf


@dataclass
class Judgement:
    """`verdict`: exact | near_tie (benign) | corrupted | unjudged (no logprobs: token equality decides)."""

    verdict: str
    reason: str
    margin_reference: float | None = None  # at the first divergence: reference's top-1 minus the cohort's token
    margin_cohort: float | None = None  # cohort's chosen minus the reference's token, in the cohort's logprobs
    self_violation: float | None = None  # worst processed-argmax violation over the cohort's output (nats)
    self_violation_at: int | None = None
    logprob_delta: float | None = None  # worst |chosen logprob - reference's| over the agreeing prefix

    def to_json(self) -> dict[str, Any]:
        return {k: (None if isinstance(v, float) and math.isinf(v) else v) for k, v in asdict(self).items()}

    @property
    def corrupted(self) -> bool:
        return self.verdict == "corrupted"


def adjusted(token: str, raw: float, position: int, prefix: list[int], params: dict[str, Any] | None) -> float:
    """The processed logprob of `token` (up to the shared normalizer) after the request's logits processors."""
    if not params:
        return raw
    tok = int(token)
    allowed = params.get("allowed_token_ids")
    if allowed is not None and tok not in set(allowed):
        return -INF
    value = raw + float((params.get("logit_bias") or {}).get(str(tok), 0.0))
    count = prefix.count(tok)
    value -= float(params.get("frequency_penalty") or 0.0) * count
    value -= float(params.get("presence_penalty") or 0.0) * (count > 0)
    if position < int(params.get("min_tokens") or 0) and tok in set(params.get("stop_token_ids") or ()):
        return -INF
    return value


# Request fields whose processing the judge does not re-apply (it cannot: repetition penalty scales raw logits,
# which the returned log-softmax values do not give; masks of grammars and banned words are the server's): with
# any of them, or a sampled request, self-consistency is not checked (the reference and the fuzzer's own
# oracles judge those requests).
UNMODELLED = ("repetition_penalty", "bad_words", "structured_outputs", "response_format", "tools")
# Request parameters that force tokens whatever the model's scores, at any value (0 included): a thinking budget
# forces the reasoning end.
FORCING = ("thinking_token_budget",)


def forces_tokens(params: dict[str, Any] | None) -> bool:
    """The request sets a parameter of FORCING: some of its tokens need not be the model's choice at all."""
    p = params or {}
    return any(p.get(k) is not None for k in FORCING)


def modelled(params: dict[str, Any] | None) -> bool:
    p = params or {}
    greedy = float(p.get("temperature") or 0.0) == 0.0
    unmodelled = any(p.get(k) not in (None, [], {}, 1.0, 1) for k in UNMODELLED)
    return greedy and not unmodelled and not forces_tokens(p)


def _scores(rec: ProbeRecord, i: int) -> dict[str, float] | None:
    """Processed scores of the tokens returned at position i (the chosen one included)."""
    tops, chosen = rec.output_top_logprobs, rec.output_token_logprobs
    ids = rec.output_token_ids or []
    if tops is None or i >= len(tops) or i >= len(ids):
        return None
    raw = dict(tops[i])
    mine = chosen[i] if chosen is not None and i < len(chosen) else None
    if mine is not None:
        raw.setdefault(str(ids[i]), float(mine))
    prefix = ids[:i]
    return {t: adjusted(t, lp, i, prefix, rec.params) for t, lp in raw.items()}


def self_violation(rec: ProbeRecord, start: int = 0) -> tuple[float, int | None]:
    """Worst (best other - chosen) processed score over the output from `start`; beyond tolerance = not argmax."""
    worst, where = 0.0, None
    for i, tok in enumerate(rec.output_token_ids or []):
        if i < start:
            continue
        scores = _scores(rec, i)
        if not scores or str(tok) not in scores:
            continue
        mine = scores[str(tok)]
        others = [v for t, v in scores.items() if t != str(tok)]
        if not others:
            continue
        gap = max(others) - mine
        if gap > worst:
            worst, where = gap, i
    return worst, where


def logprob_delta(rec: ProbeRecord, ref: ProbeRecord, upto: int) -> float | None:
    a, b = rec.output_token_logprobs, ref.output_token_logprobs
    if a is None or b is None:
        return None
    deltas = [abs(x - y) for x, y in zip(a[:upto], b[:upto], strict=False) if x is not None and y is not None]
    return max(deltas, default=0.0)


def _margin(side: ProbeRecord, d: int, own: int, other: int, theirs: dict[str, float] | None = None) -> float:
    """How far `other` trails `own` in `side`'s processed scores at d (inf: `other` is not in its top-k).

    `theirs`: the other side's scores at d, used for `other` when `side`'s top-k lacks it; the caller passes
    them only where both sides' raw top-k lists agree (the same context must give the same distribution; a
    state bug does not, so it keeps inf). This makes `allowed_token_ids` judgeable: its candidates are rarely
    in the raw top-k."""
    scores = _scores(side, d)
    if scores is None or str(own) not in scores:
        return INF
    if str(other) in scores:
        return scores[str(own)] - scores[str(other)]
    if theirs is None or str(other) not in theirs:
        return INF
    return scores[str(own)] - theirs[str(other)]


def _agree(a: dict[str, float], b: dict[str, float], tolerance: float = 0.05) -> bool:
    """At least 3 shared finite tokens whose scores differ by at most `tolerance` nats."""
    shared = [t for t in a if t in b and math.isfinite(a[t]) and math.isfinite(b[t])]
    return len(shared) >= 3 and max(abs(a[t] - b[t]) for t in shared) <= tolerance


def judge(rec: ProbeRecord, ref: ProbeRecord | None, near_tie: float, lp_tolerance: float) -> Judgement:
    """Judge one compared record (its `first_divergence` already filled) against its reference's record."""
    out = rec.output_token_ids or []
    if rec.output_top_logprobs is None:
        verdict = "corrupted" if rec.diverged else "exact"
        return Judgement(verdict, "no logprobs: token equality decides")
    # Where the speculation-off reference chose the same tokens from the same context, the choice is the
    # reference's own processing (e.g. vLLM also masks EOS before min_tokens, which the judge does not model):
    # self-consistency is checked from the first divergence on (everywhere without a reference).
    agreed = 0
    if ref is not None and ref.output_token_ids is not None:
        agreed = len(out) if rec.first_divergence is None else rec.first_divergence
    worst, where = self_violation(rec, agreed) if modelled(rec.params) else (0.0, None)
    j = Judgement("exact", "", self_violation=round(worst, 4), self_violation_at=where)
    if worst > SELF_TOLERANCE:
        j.verdict = "corrupted"
        j.reason = f"token {where} is not the argmax of its processed distribution (by {worst:.3g} nats)"
        return j
    d = rec.first_divergence
    if ref is None or ref.output_token_ids is None:
        j.reason = "self-consistent; no reference output"
        return j
    upto = len(out) if d is None else d
    j.logprob_delta = delta = logprob_delta(rec, ref, upto)
    if delta is not None and delta > lp_tolerance:
        j.verdict = "corrupted"
        j.reason = f"logprobs of identical tokens differ from the reference's by {delta:.3g} nats"
        return j
    if d is None:
        j.reason = "identical tokens"
        return j
    return _judge_divergence(j, rec, ref, d, near_tie)


def _judge_divergence(j: Judgement, rec: ProbeRecord, ref: ProbeRecord, d: int, near_tie: float) -> Judgement:
    out, ref_out = rec.output_token_ids or [], ref.output_token_ids or []
    if d >= len(out) or d >= len(ref_out):
        j.verdict, j.reason = "corrupted", f"the output {'ends' if d >= len(out) else 'runs on'} at token {d}"
        return j
    raw_mine, raw_theirs = (_top(r, d) for r in (rec, ref))
    agree = _agree(raw_mine, raw_theirs)  # the raw top-k lists: same context, same distribution?
    mine, theirs = (_scores(rec, d), _scores(ref, d)) if agree else (None, None)
    j.margin_reference = _margin(ref, d, ref_out[d], out[d], mine)
    j.margin_cohort = _margin(rec, d, out[d], ref_out[d], theirs)
    worst = max(j.margin_reference, j.margin_cohort)
    shown = "outside the top-k" if math.isinf(worst) else f"{worst:.3g} nats"
    if worst <= near_tie:
        j.verdict = "near_tie"
        j.reason = f"token {d} flips between a near-tie ({shown} <= {near_tie}); benign"
    else:
        j.verdict = "corrupted"
        j.reason = f"token {d} differs and is no near-tie ({shown} > {near_tie})"
    j.margin_reference = _finite(j.margin_reference)
    j.margin_cohort = _finite(j.margin_cohort)
    return j


def _top(rec: ProbeRecord, i: int) -> dict[str, float]:
    tops = rec.output_top_logprobs or []
    return tops[i] if i < len(tops) else {}


def _finite(x: float | None) -> float | None:
    return None if x is None or math.isinf(x) else round(x, 4)
