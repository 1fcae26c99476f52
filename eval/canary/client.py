"""Async HTTP calls of the canary: greedy completions with token-id prompts (plain and streaming) and chats.

Every call returns a `Reply`; transport and HTTP errors become `Reply.error` (an infra error of the probe),
never an exception, so one failing request does not hide the others of its batch.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from typing import Any

import httpx


@dataclass
class Reply:
    output_ids: list[int] | None = None
    text: str = ""
    finish_reason: str | None = None
    prompt_ids: list[int] | None = None
    prompt_tokens: int | None = None
    cached_tokens: int | None = None
    started_at: float = 0.0
    ended_at: float = 0.0
    error: str | None = None
    token_logprobs: list[float | None] | None = None  # the chosen token's logprob per output position
    top_logprobs: list[dict[str, float]] | None = None  # per position: token id (as a string) -> logprob
    first_token: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def latency_s(self) -> float:
        return round(self.ended_at - self.started_at, 4)


def _token_id(token: str) -> str:
    """`token_id:123` (vLLM's `return_tokens_as_token_ids`) -> `123`; other strings pass through."""
    return token.removeprefix("token_id:")


def _take_logprobs(reply: Reply, lp: dict[str, Any] | None) -> None:
    """Append a completion's `logprobs` block (tokens rendered as ids) to the reply."""
    if not lp or lp.get("token_logprobs") is None:
        return
    reply.token_logprobs = (reply.token_logprobs or []) + list(lp["token_logprobs"])
    # A logprob of -inf (a masked token) comes back as null: it cannot be the top of anything, so it is dropped.
    tops = [
        {_token_id(k): float(v) for k, v in (t or {}).items() if v is not None} for t in lp.get("top_logprobs") or []
    ]
    reply.top_logprobs = (reply.top_logprobs or []) + tops


def _take_chat_logprobs(reply: Reply, lp: dict[str, Any] | None) -> None:
    content = (lp or {}).get("content")
    if not content:
        return
    reply.token_logprobs = [c.get("logprob") for c in content]
    reply.top_logprobs = [
        {
            _token_id(t["token"]): float(t["logprob"])
            for t in c.get("top_logprobs") or []
            if t.get("logprob") is not None
        }
        for c in content
    ]


def _usage(reply: Reply, usage: dict[str, Any] | None) -> None:
    if not usage:
        return
    reply.prompt_tokens = usage.get("prompt_tokens")
    details = usage.get("prompt_tokens_details") or {}
    reply.cached_tokens = details.get("cached_tokens")


class CanaryClient:
    """One stack's endpoint. `sampling` holds the greedy settings shared by every request."""

    def __init__(self, base_url: str, model: str, seed: int, timeout_s: float = 600) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.seed = seed
        self._http = httpx.AsyncClient(base_url=self.base_url, timeout=timeout_s)

    async def aclose(self) -> None:
        await self._http.aclose()

    def _body(self, max_tokens: int, params: dict[str, Any] | None = None, logprobs: int = 0) -> dict[str, Any]:
        """Greedy settings; `params` (per-request sampling parameters) go on top; `logprobs` top-k, ids as tokens."""
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": max_tokens,
            "temperature": 0.0,
            "seed": self.seed,
            "ignore_eos": True,  # fixed lengths: every position is compared
            "return_token_ids": True,
        }
        if logprobs:
            body.update(logprobs=logprobs, return_tokens_as_token_ids=True)
        body.update(params or {})
        return body

    async def complete(
        self, prompt: list[int], max_tokens: int, params: dict[str, Any] | None = None, logprobs: int = 0
    ) -> Reply:
        reply = Reply(started_at=time.monotonic())
        try:
            body = {**self._body(max_tokens, params, logprobs), "prompt": prompt}
            data = _ok_json(await self._http.post("/v1/completions", json=body))
            choice = data["choices"][0]
            _take_logprobs(reply, choice.get("logprobs"))
            reply.output_ids = [int(t) for t in choice.get("token_ids") or []]
            reply.text = choice.get("text") or ""
            reply.finish_reason = choice.get("finish_reason")
            reply.prompt_ids = choice.get("prompt_token_ids")
            _usage(reply, data.get("usage"))
        except (httpx.HTTPError, ValueError, KeyError, IndexError) as e:
            reply.error = _describe(e)
        reply.ended_at = time.monotonic()
        reply.first_token.set()
        return reply

    async def stream(self, prompt: list[int], max_tokens: int, reply: Reply | None = None, logprobs: int = 0) -> Reply:
        """A streaming completion into `reply`; `reply.first_token` is set once a token arrived (it is decoding)."""
        reply = reply or Reply()
        reply.started_at, reply.output_ids = time.monotonic(), []
        body = {**self._body(max_tokens, None, logprobs), "prompt": prompt, "stream": True}
        body["stream_options"] = {"include_usage": True}
        try:
            async with self._http.stream("POST", "/v1/completions", json=body) as resp:
                if resp.status_code != 200:
                    raise ValueError(f"HTTP {resp.status_code}: {(await resp.aread()).decode(errors='replace')[:300]}")
                async for line in resp.aiter_lines():
                    _stream_line(reply, line)
        except (httpx.HTTPError, ValueError, KeyError) as e:
            reply.error = _describe(e)
        reply.ended_at = time.monotonic()
        reply.first_token.set()
        return reply

    async def chat(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], tool_choice: str, n: int, logprobs: int = 0
    ) -> Reply:
        reply = Reply(started_at=time.monotonic())
        body = {**self._body(n), "messages": messages, "tools": tools, "tool_choice": tool_choice}
        if logprobs:
            body.update(logprobs=True, top_logprobs=logprobs, return_tokens_as_token_ids=True)
        try:
            data = _ok_json(await self._http.post("/v1/chat/completions", json=body))
            choice = data["choices"][0]
            _take_chat_logprobs(reply, choice.get("logprobs"))
            msg = choice.get("message") or {}
            reply.output_ids = [int(t) for t in choice.get("token_ids") or []]
            calls = msg.get("tool_calls") or []
            reply.text = (msg.get("content") or "") + "".join(json.dumps(c.get("function")) for c in calls)
            reply.finish_reason = choice.get("finish_reason")
            reply.prompt_ids = data.get("prompt_token_ids")
            _usage(reply, data.get("usage"))
        except (httpx.HTTPError, ValueError, KeyError, IndexError) as e:
            reply.error = _describe(e)
        reply.ended_at = time.monotonic()
        return reply


def _stream_line(reply: Reply, line: str) -> None:
    if not line.startswith("data:"):
        return
    payload = line[5:].strip()
    if payload == "[DONE]":
        return
    data = json.loads(payload)
    if "error" in data:
        raise ValueError(str(data["error"])[:300])
    _usage(reply, data.get("usage"))
    for choice in data.get("choices") or []:
        assert reply.output_ids is not None
        reply.output_ids += [int(t) for t in choice.get("token_ids") or []]
        reply.text += choice.get("text") or ""
        _take_logprobs(reply, choice.get("logprobs"))
        if choice.get("prompt_token_ids"):
            reply.prompt_ids = choice["prompt_token_ids"]
        if choice.get("finish_reason"):
            reply.finish_reason = choice["finish_reason"]
        if reply.output_ids:
            reply.first_token.set()


def _ok_json(resp: httpx.Response) -> dict[str, Any]:
    if resp.status_code != 200:
        raise ValueError(f"HTTP {resp.status_code}: {resp.text[:300]}")
    data = resp.json()
    if not isinstance(data, dict):
        raise ValueError("the response is not a JSON object")
    return data


def _describe(e: Exception) -> str:
    return f"{type(e).__name__}: {e}"[:500] or type(e).__name__


HEALTH_WAIT_S = 900  # how long a canary waits for a stack the watchdog is restarting


async def wait_healthy(base_url: str, timeout_s: float) -> bool:
    """Wait until the server answers /health with 200 (True), or `timeout_s` passed (False). vLLM answers 503
    while its engine is dead, so this also waits out an engine the stack's watchdog is restarting."""
    deadline = time.monotonic() + timeout_s
    async with httpx.AsyncClient(timeout=10) as http:
        while True:
            try:
                if (await http.get(base_url.rstrip("/") + "/health")).status_code == 200:
                    return True
            except httpx.HTTPError:
                pass
            if time.monotonic() >= deadline:
                return False
            await asyncio.sleep(3)
