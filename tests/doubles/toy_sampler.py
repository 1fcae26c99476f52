"""A toy OpenAI-compatible completions server that samples, for the sampled mode's tests (no vLLM).

The model: raw logits over `V` tokens depend on the last token and the position only. The server samples with the
request's temperature / top-k / top-p (seeded per request when a seed is given), answers `prompt_logprobs: -1` with
the full raw log-distribution at every prompt position, and `logprobs: -1` with its decode-time one. `shift` re-
creates a faulty rejection sampler: on odd output positions ("draft rows") `shift` of probability moves to the most
likely token before sampling. `greedy_fault_after` re-creates a greedy state bug: from that output position on,
a greedy request gets the least likely token. Prompt logprobs hold the top k plus the prompt token's own, as
vLLM's do. `max_logprobs` re-creates vLLM's limit (default 20): more prompt logprobs than that
(or -1, the whole vocabulary) get HTTP 400. Runs in a thread: `with ToySampler() as s: s.base_url`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from aiohttp import web

from tests.fixtures.threaded_app import ThreadedApp

V = 40


def raw_logprobs(context: list[int]) -> np.ndarray:
    last, pos = (context[-1] if context else 0), len(context)
    x = np.array([((last * 31 + t * t * 7 + pos * 3 + t * last) % 23) / 4.0 for t in range(V)])
    return x - (np.log(np.exp(x - x.max()).sum()) + x.max())


def _sample_law(raw: np.ndarray, req: dict[str, Any]) -> np.ndarray:
    """Temperature, then top-k (ties kept), then top-p (ascending cumulative sum <= 1 - p masked, the top kept)."""
    x = raw / float(req["temperature"])
    k = req.get("top_k")
    if k and int(k) < V:
        x = np.where(x < np.sort(x)[-int(k)], -np.inf, x)
    p = float(req.get("top_p") or 1.0)
    if p < 1:
        order = np.argsort(x, kind="stable")
        probs = np.exp(x[order] - x[order][-1])
        mask = np.cumsum(probs / probs.sum()) <= 1 - p
        mask[-1] = False
        x[order[mask]] = -np.inf
    q = np.exp(x - x.max())
    return q / q.sum()


class ToySampler(ThreadedApp):
    name = "the toy sampler"

    def __init__(self, shift: float = 0.0, max_logprobs: int = -1, greedy_fault_after: int | None = None) -> None:
        super().__init__()
        self.shift = shift
        self.max_logprobs = max_logprobs
        self.greedy_fault_after = greedy_fault_after

    def _generate(self, req: dict[str, Any], prompt: list[int]) -> tuple[list[int], list[dict[str, float]]]:
        rng = np.random.default_rng(req.get("seed"))
        out: list[int] = []
        tops: list[dict[str, float]] = []
        for i in range(int(req["max_tokens"])):
            raw = raw_logprobs(prompt + out)
            if not req.get("temperature"):
                fault = self.greedy_fault_after is not None and i >= self.greedy_fault_after
                out.append(int(np.argmin(raw) if fault else np.argmax(raw)))
                continue
            law = _sample_law(raw, req)
            if self.shift and i % 2 == 1:
                top = int(np.argmax(law))
                new = min(1.0, law[top] + self.shift)
                law = law * ((1 - new) / max(1 - law[top], 1e-12))
                law[top] = new
            out.append(int(rng.choice(V, p=law / law.sum())))
            tops.append({f"token_id:{t}": float(raw[t]) for t in range(V)})
        return out, tops

    async def _complete(self, request: web.Request) -> web.Response:
        req = await request.json()
        prompt = [int(t) for t in req["prompt"]]
        if req.get("prompt_logprobs") is not None:
            asked = int(req["prompt_logprobs"])
            if self.max_logprobs >= 0 and (asked < 0 or asked > self.max_logprobs):
                return web.json_response({"error": {"message": "too many prompt logprobs"}}, status=400)
            rows: list[Any] = [None]
            for i in range(1, len(prompt)):
                raw = raw_logprobs(prompt[:i])
                k = int(req["prompt_logprobs"])
                top = [*np.argsort(-raw)[: (V if k < 0 else k)], prompt[i]]
                rows.append({str(t): {"logprob": float(raw[t]) if math.isfinite(raw[t]) else None} for t in top})
            choice: dict[str, Any] = {"token_ids": [0], "prompt_logprobs": rows}
            return web.json_response({"choices": [choice]})
        out, tops = self._generate(req, prompt)
        choice = {"token_ids": out, "text": "", "finish_reason": "length"}
        if req.get("logprobs") is not None:
            choice["logprobs"] = {"top_logprobs": tops}
        return web.json_response({"choices": [choice]})

    async def _health(self, _request: web.Request) -> web.Response:
        return web.Response(status=200)  # vLLM's /health: the probe waits for it before a run's first batch

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/completions", self._complete)
        app.router.add_get("/health", self._health)
