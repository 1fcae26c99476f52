"""A toy OpenAI-compatible completions server with a deterministic toy language model, for the fuzzer's tests.

Vocabulary: the canary's 64 words (token id = index in `eval.canary.prompts.WORDS`), tokenized by splitting on
spaces (`toy_tokenize`). The next-token logits depend on the last token and the position only. The server applies
the processors vLLM applies (presence/frequency/repetition penalties, logit bias, allowed ids, bad words,
min_tokens with stop ids, stop ids, stop strings, top-k with temperature) and returns raw top-k logprobs.
`bug=` re-creates a speculative-decoding bug the way the zoo does: the processor is skipped on "draft rows"
(odd output positions): "penalties", "min_tokens", "logprobs" (returns processed logprobs), or "prefix" (a
request with a prefix-cache hit of its earlier prompt gets a shifted state: every token after the first is +1).
`/openapi.json` declares the request fields (and one field of no known meaning, `toy_flag`).
"""

from __future__ import annotations

import asyncio
import json
import math
import random
from typing import Any

from aiohttp import web

from eval.canary.prompts import WORDS
from tests.fixtures.threaded_app import ThreadedApp

V = len(WORDS)
FIELDS: dict[str, Any] = {
    "model": {"type": "string"},
    "prompt": {"anyOf": [{"type": "array"}, {"type": "string"}]},
    "max_tokens": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
    "temperature": {"anyOf": [{"type": "number"}, {"type": "null"}]},
    "top_p": {"anyOf": [{"type": "number"}, {"type": "null"}]},
    "top_k": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
    "seed": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
    "presence_penalty": {"anyOf": [{"type": "number"}, {"type": "null"}]},
    "frequency_penalty": {"anyOf": [{"type": "number"}, {"type": "null"}]},
    "repetition_penalty": {"anyOf": [{"type": "number"}, {"type": "null"}]},
    "logit_bias": {"anyOf": [{"type": "object"}, {"type": "null"}]},
    "min_tokens": {"type": "integer", "default": 0},
    "stop": {"anyOf": [{"type": "array"}, {"type": "null"}]},
    "stop_token_ids": {"anyOf": [{"type": "array"}, {"type": "null"}]},
    "include_stop_str_in_output": {"type": "boolean", "default": False},
    "ignore_eos": {"type": "boolean", "default": False},
    "allowed_token_ids": {"anyOf": [{"type": "array"}, {"type": "null"}]},
    "bad_words": {"type": "array"},
    "n": {"type": "integer", "default": 1},
    "logprobs": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
    "prompt_logprobs": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
    "toy_flag": {"type": "boolean", "default": False},
}


def toy_tokenize(text: str) -> list[int]:
    return [WORDS.index(w) for w in text.split() if w in WORDS]


def raw_logits(context: list[int]) -> list[float]:
    last, pos = (context[-1] if context else 0), len(context)
    return [((last * 31 + t * t * 7 + pos * 3 + t * last) % 97) / 9.0 for t in range(V)]


def log_softmax(xs: list[float]) -> list[float]:
    m = max(xs)
    z = m + math.log(sum(math.exp(x - m) for x in xs if x > -math.inf))
    return [x - z if x > -math.inf else -math.inf for x in xs]


class ToyModel:
    def __init__(self, bug: str | None = None) -> None:
        self.bug = bug
        self.seen_prompts: list[list[int]] = []

    def processed(self, req: dict[str, Any], prompt: list[int], out: list[int], draft: bool) -> list[float]:
        logits = raw_logits(prompt + out)
        skip = draft and self.bug is not None
        if not (skip and self.bug == "penalties"):
            for t in set(out):
                presence, frequency = float(req.get("presence_penalty") or 0), float(req.get("frequency_penalty") or 0)
                logits[t] -= presence + frequency * out.count(t)
            r = float(req.get("repetition_penalty") or 1.0)
            for t in set(prompt + out):
                logits[t] = logits[t] / r if logits[t] > 0 else logits[t] * r
        for k, v in (req.get("logit_bias") or {}).items():
            logits[int(k)] += float(v)
        allowed = req.get("allowed_token_ids")
        banned = {toy_tokenize(w)[-1] for w in req.get("bad_words") or [] if toy_tokenize(w)}
        stops = set(req.get("stop_token_ids") or [])
        masked = len(out) < int(req.get("min_tokens") or 0) and not (skip and self.bug == "min_tokens")
        for t in range(V):
            if (allowed and t not in allowed) or t in banned or (masked and t in stops):
                logits[t] = -math.inf
        return logits

    def generate(self, req: dict[str, Any], prompt: list[int], choice: int) -> dict[str, Any]:
        hit = self.bug == "prefix" and any(p[:8] == prompt[:8] and p != prompt for p in self.seen_prompts)
        self.seen_prompts.append(prompt)
        out: list[int] = []
        lps: list[float] = []
        tops: list[dict[str, float]] = []
        temp = float(req.get("temperature") or 0.0)
        rng = random.Random(f"{req.get('seed')}:{choice}:{prompt}")
        k = int(req.get("logprobs") or 0)
        finish = "length"
        for i in range(int(req.get("max_tokens") or 16)):
            logits = self.processed(req, prompt, out, draft=i % 2 == 1)
            tok = self.pick(logits, temp, int(req.get("top_k") or -1), rng)
            if hit and i > 0:
                tok = (tok + 1) % V
            raw = log_softmax(raw_logits(prompt + out))
            if self.bug == "logprobs" and i % 2 == 1:
                raw = log_softmax(logits)
            best = sorted(range(V), key=lambda t: -raw[t])[:k]
            tops.append({f"token_id:{t}": raw[t] for t in [*best, tok]})
            lps.append(raw[tok])
            out.append(tok)
            if tok in set(req.get("stop_token_ids") or []):
                finish = "stop"
                break
        text = " ".join(WORDS[t] for t in out)
        for s in req.get("stop") or []:
            at = f" {text} ".find(f" {s} ")
            if at >= 0:
                keep = len(toy_tokenize(text[:at])) + (1 if req.get("include_stop_str_in_output") else 0)
                out, lps, tops, finish = out[:keep], lps[:keep], tops[:keep], "stop"
                text = " ".join(WORDS[t] for t in out)
        return {"ids": out, "lps": lps, "tops": tops, "finish": finish, "text": text}

    @staticmethod
    def pick(logits: list[float], temp: float, top_k: int, rng: random.Random) -> int:
        order = sorted(range(V), key=lambda t: -logits[t])
        if temp <= 0 or logits[order[0]] == -math.inf:
            return order[0]
        cand = order[:top_k] if top_k > 0 else order
        weights = [math.exp((logits[t] - logits[order[0]]) / temp) if logits[t] > -math.inf else 0.0 for t in cand]
        return rng.choices(cand, weights)[0]


def _choice(g: dict[str, Any], i: int, k: int, ids: list[int] | None = None) -> dict[str, Any]:
    ids = g["ids"] if ids is None else ids
    lp = None
    if k:
        lp = {"token_logprobs": g["lps"][: len(ids)], "top_logprobs": g["tops"][: len(ids)]}
    return {"index": i, "text": g["text"], "token_ids": ids, "logprobs": lp, "finish_reason": g["finish"]}


class ToyServer(ThreadedApp):
    """`with ToyServer(bug=None) as s: s.base_url`; runs in a thread (tests/fixtures/threaded_app.py)."""

    name = "the toy server"

    def __init__(self, bug: str | None = None, refuse: tuple[str, ...] = ("structured_outputs", "response_format")):
        super().__init__()
        self.model = ToyModel(bug)
        self.refuse = refuse

    async def _openapi(self, request: web.Request) -> web.Response:
        schema = {"type": "object", "properties": FIELDS}
        return web.json_response({"components": {"schemas": {"CompletionRequest": schema}}})

    async def _complete(self, request: web.Request) -> web.StreamResponse:
        req = await request.json()
        bad = [f for f in self.refuse if req.get(f)]
        if bad or isinstance(req.get("prompt"), str):
            return web.Response(status=400, text=json.dumps({"error": f"unsupported: {bad}"}))
        prompt = list(req["prompt"])
        gens = [self.model.generate(req, prompt, i) for i in range(int(req.get("n") or 1))]
        k = int(req.get("logprobs") or 0)
        usage = {"prompt_tokens": len(prompt), "prompt_tokens_details": {"cached_tokens": 0}}
        if not req.get("stream"):
            body = {"choices": [_choice(g, i, k) for i, g in enumerate(gens)], "usage": usage}
            if req.get("prompt_logprobs") is not None:
                body["choices"][0]["prompt_logprobs"] = [None] + [{str(t): -1.0} for t in prompt[1:]]
            return web.json_response(body)
        resp = web.StreamResponse()
        await resp.prepare(request)
        g = gens[0]
        i = 0
        try:
            while i < len(g["ids"]):
                step = 1 + (i % 3)
                chunk = _choice(g, 0, k, g["ids"][i : i + step])
                if k:
                    chunk["logprobs"] = {
                        "token_logprobs": g["lps"][i : i + step],
                        "top_logprobs": g["tops"][i : i + step],
                    }
                chunk["finish_reason"] = g["finish"] if i + step >= len(g["ids"]) else None
                chunk["text"] = " ".join(WORDS[t] for t in g["ids"][i : i + step])
                await resp.write(f"data: {json.dumps({'choices': [chunk]})}\n\n".encode())
                await asyncio.sleep(0.001)
                i += step
            await resp.write(f"data: {json.dumps({'choices': [], 'usage': usage})}\n\ndata: [DONE]\n\n".encode())
        except (ConnectionResetError, RuntimeError):
            pass
        return resp

    async def _models(self, request: web.Request) -> web.Response:
        return web.json_response({"data": [{"id": "toy"}]})

    async def _chat(self, request: web.Request) -> web.Response:
        return web.Response(status=400, text='{"error": "no chat template"}')

    def routes(self, app: web.Application) -> None:
        app.router.add_get("/openapi.json", self._openapi)
        app.router.add_get("/v1/models", self._models)
        app.router.add_get("/health", self._models)
        app.router.add_post("/v1/completions", self._complete)
        app.router.add_post("/v1/chat/completions", self._chat)
