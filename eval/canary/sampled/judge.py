"""Judge one draw against its reference logprobs: a PIT per sampled token, support and greedy checks.

- Sampled draw: at each position, the request's transforms on the reference's raw logprobs give the exact
  distribution; the token's randomized PIT goes to the test. A token that the transforms mask (outside top-k /
  top-p) is a support violation, unless its tempered logit is within `support_slack` nats of the cut-off (a
  rounding tie at the boundary, counted apart and left out of the test).
- Greedy draw (item 4 of issue 28): every token must be the reference's argmax at its own prefix, up to a near tie
  of `near_tie_nats`; the greedy canary stops comparing at the first benign flip, this check goes on after it.

The PIT's own randomization V comes from a generator seeded by (run seed, draw, position): re-judging saved draws
gives the same PITs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from eval.canary.sampled.draws import Draw
from eval.canary.sampled.stats import randomized_pit
from eval.canary.sampled.transforms import SamplingParams, processed_logits, processed_probs


@dataclass
class DrawVerdict:
    index: int
    pits: list[float] = field(default_factory=list)
    support_violations: list[int] = field(default_factory=list)  # positions
    boundary_ties: list[int] = field(default_factory=list)
    greedy_violations: list[int] = field(default_factory=list)
    ref_prob: list[float] = field(default_factory=list)  # the reference's probability of each emitted token
    decode_tv: list[float] = field(default_factory=list)  # TV(server's decode-time law, re-scored law) per token
    decode_gap: list[float] = field(default_factory=list)  # max |decode-time - re-scored raw logprob| per token
    inexact: int = 0  # tokens left untested: a setting whose law needs the whole vocabulary, which was not returned

    def record(self) -> dict[str, object]:
        return {
            "index": self.index,
            "pits": [round(u, 6) for u in self.pits],
            "support_violations": self.support_violations,
            "boundary_ties": self.boundary_ties,
            "greedy_violations": self.greedy_violations,
            "ref_prob": [round(p, 6) for p in self.ref_prob],
            "decode_tv": [round(x, 7) for x in self.decode_tv],
            "decode_gap": [round(x, 7) for x in self.decode_gap],
            "inexact": self.inexact,
        }


def judge_draw(draw: Draw, ref: np.ndarray, seed: int, support_slack: float, near_tie_nats: float) -> DrawVerdict:
    verdict = DrawVerdict(index=draw.index)
    if draw.decode_logprobs is not None:
        verdict.decode_tv = decode_tvs(draw, ref)
        verdict.decode_gap = decode_logprob_gaps(draw, ref)
    rng = np.random.default_rng([seed, draw.index, 0x5A3])
    for t, token in enumerate(draw.output):
        raw = ref[t]
        known = np.isfinite(raw)
        partial = float(np.exp(raw[known]).sum()) < 1.0 - 1e-4
        if draw.params is None:
            _judge_greedy(verdict, t, token, raw, near_tie_nats)
            continue
        v = float(rng.random())
        p = draw.params
        if partial and not (p.top_k is not None and p.top_k <= int(known.sum())):
            if p.temperature == 1.0 and p.top_p == 1.0 and p.top_k is None:
                _judge_rest_bucket(verdict, t, token, raw, known, v)
            else:
                verdict.inexact += 1  # the tempered mass of the tokens not returned is unknown
            continue
        x = processed_logits(raw, p)
        probs = np.exp(x - np.max(x))
        probs /= probs.sum()
        verdict.ref_prob.append(float(probs[token]))
        u = randomized_pit(probs, token, v)
        if u is not None:
            verdict.pits.append(u)
            continue
        cutoff = float(np.min(x[np.isfinite(x)]))
        if raw[token] / p.temperature >= cutoff - support_slack:
            verdict.boundary_ties.append(t)
        else:
            verdict.support_violations.append(t)
    return verdict


def _judge_greedy(verdict: DrawVerdict, t: int, token: int, raw: np.ndarray, near_tie_nats: float) -> None:
    best = int(np.argmax(raw))
    # A token not among the returned top k has a logprob at most the smallest returned one.
    mine = raw[token] if np.isfinite(raw[token]) else float(np.min(raw[np.isfinite(raw)]))
    if token != best and raw[best] - mine > near_tie_nats:
        verdict.greedy_violations.append(t)
    verdict.ref_prob.append(float(np.exp(raw[token])))


def _judge_rest_bucket(verdict: DrawVerdict, t: int, token: int, raw: np.ndarray, known: np.ndarray, v: float) -> None:
    """T=1, no masks, top k returned: categories = the k tokens + one 'rest' bucket of mass 1 - their sum."""
    ids = np.flatnonzero(known)
    probs = np.append(np.exp(raw[ids]), 0.0)
    probs[-1] = max(0.0, 1.0 - float(probs[:-1].sum()))
    hit = np.flatnonzero(ids == token)
    index = int(hit[0]) if hit.size else probs.size - 1
    verdict.ref_prob.append(float(probs[index]))
    u = randomized_pit(probs, index, v)
    if u is not None:
        verdict.pits.append(u)
    else:
        verdict.support_violations.append(t)


def decode_tvs(draw: Draw, ref: np.ndarray) -> list[float]:
    """Per position: TV between the law the server sampled from (its decode-time logprobs, transformed) and the
    re-scored one. Greedy draws compare the raw (temperature 1) laws."""
    assert draw.decode_logprobs is not None
    params = draw.params or SamplingParams()
    out = []
    for t in range(min(len(draw.decode_logprobs), len(ref))):
        a = processed_probs(draw.decode_logprobs[t], params)
        b = processed_probs(ref[t], params)
        out.append(float(0.5 * np.abs(a - b).sum()))
    return out


def decode_logprob_gaps(draw: Draw, ref: np.ndarray, floor: float = -20.0) -> list[float]:
    """Per position: the largest |decode-time raw logprob - re-scored raw logprob| over tokens above `floor`
    (the rounding a top-k / top-p boundary can see)."""
    assert draw.decode_logprobs is not None
    out = []
    for t in range(min(len(draw.decode_logprobs), len(ref))):
        a, b = draw.decode_logprobs[t], ref[t]
        keep = np.isfinite(a) & np.isfinite(b) & (b > floor)
        out.append(float(np.abs(a[keep] - b[keep]).max()) if keep.any() else 0.0)
    return out
