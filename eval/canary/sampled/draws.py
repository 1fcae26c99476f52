"""The sampled mode's draws: a deterministic plan (prompt, setting, seed) and the HTTP calls that make them.

Draw i is the same on every cohort and every resume (seeded by (seed, i)). Request seeds differ per draw (a fixed
seed would repeat one sample), a share of draws carries none, and prefix-hit draws reuse a warmed prompt's cached
blocks plus one new token: the padded-prompt-tail path of speculative decoding (PR 55178).
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from typing import Any

import httpx
import numpy as np

from eval.canary.sampled.transforms import SamplingParams
from eval.spec.workloads import SampledWorkload

FIRST_ID = 10  # the generated models' special tokens sit below this


@dataclass
class Draw:
    index: int
    prompt: list[int]
    params: SamplingParams | None  # None: a greedy draw
    seed: int | None
    prefix_hit: bool = False
    output: list[int] = field(default_factory=list)
    error: str | None = None
    latency_s: float = 0.0
    # The server's own full-vocabulary logprobs of each decode step ([positions, vocab], raw), when asked for:
    # on the reference they measure how far decode-time and re-scored (prefill) distributions differ.
    decode_logprobs: np.ndarray | None = None

    def body(self, model: str, max_tokens: int, logprobs: bool = False, k: int = -1) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": model,
            "prompt": self.prompt,
            "max_tokens": max_tokens,
            "ignore_eos": True,  # fixed lengths: every position is a sample
            "return_token_ids": True,
        }
        body.update(self.params.as_request() if self.params is not None else {"temperature": 0.0})
        if self.seed is not None:
            body["seed"] = self.seed
        if logprobs:
            body.update(logprobs=k, return_tokens_as_token_ids=True)
        return body

    def record(self) -> dict[str, Any]:
        p = self.params
        return {
            "index": self.index,
            "prompt": self.prompt,
            "params": None if p is None else {"temperature": p.temperature, "top_p": p.top_p, "top_k": p.top_k},
            "seed": self.seed,
            "prefix_hit": self.prefix_hit,
            "output": self.output,
            "error": self.error,
            "latency_s": round(self.latency_s, 4),
        }


def warm_prompt(cfg: SampledWorkload, vocab: int) -> list[int]:
    rng = random.Random(f"sampled-warm:{cfg.seed}")
    return [rng.randrange(FIRST_ID, vocab) for _ in range(cfg.warm_tokens)]


def plan_draw(cfg: SampledWorkload, vocab: int, index: int) -> Draw:
    rng = random.Random(f"sampled:{cfg.seed}:{index}")
    prefix_hit = rng.random() < cfg.prefix_hit_fraction
    if prefix_hit:
        prompt = [*warm_prompt(cfg, vocab)[: cfg.hit_tokens], rng.randrange(FIRST_ID, vocab)]
    else:
        lo, hi = cfg.prompt_tokens
        prompt = [rng.randrange(FIRST_ID, vocab) for _ in range(rng.randint(lo, hi))]
    params: SamplingParams | None = None
    if rng.random() >= cfg.greedy_fraction:
        s = cfg.settings[index % len(cfg.settings)]
        params = SamplingParams(temperature=s.temperature, top_p=s.top_p, top_k=s.top_k)
    seed = None if rng.random() < cfg.unseeded_fraction else rng.randrange(1, 2**31 - 1)
    return Draw(index=index, prompt=prompt, params=params, seed=seed, prefix_hit=prefix_hit)


async def sample(
    http: httpx.AsyncClient,
    model: str,
    max_tokens: int,
    draw: Draw,
    vocab: int = 0,
    logprobs: bool = False,
    k: int = -1,
) -> Draw:
    """Make the draw on a server (its output or its error is set on it); `logprobs`: keep the server's own
    full-vocabulary logprobs of each step too."""
    t0 = time.monotonic()
    try:
        resp = await http.post("/v1/completions", json=draw.body(model, max_tokens, logprobs, k))
        if resp.status_code != 200:
            raise ValueError(f"HTTP {resp.status_code}: {resp.text[:300]}")
        choice = resp.json()["choices"][0]
        draw.output = [int(t) for t in choice["token_ids"]]
        if logprobs:
            draw.decode_logprobs = decode_matrix(choice["logprobs"]["top_logprobs"], vocab)
    except (httpx.HTTPError, ValueError, KeyError, IndexError, TypeError) as e:
        draw.error = f"{type(e).__name__}: {e}"[:500]
    draw.latency_s = time.monotonic() - t0
    return draw


def decode_matrix(tops: list[dict[str, float | None]], vocab: int) -> np.ndarray:
    out = np.full((len(tops), vocab), -np.inf)
    for i, row in enumerate(tops):
        for tok, lp in (row or {}).items():
            if lp is not None:
                out[i, int(tok.removeprefix("token_id:"))] = float(lp)
    return out


async def warm(http: httpx.AsyncClient, model: str, prompt: list[int]) -> None:
    """Put `prompt` into the prefix cache (one greedy token)."""
    body = {"model": model, "prompt": prompt, "max_tokens": 1, "temperature": 0.0}
    resp = await http.post("/v1/completions", json=body)
    if resp.status_code != 200:
        raise ValueError(f"warm-up request failed: HTTP {resp.status_code}: {resp.text[:300]}")
