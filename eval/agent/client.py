"""A fast chat-completions client: pre-serialized request JSON sent with aiohttp, raw responses kept whole.

Why not the openai SDK per request: `AsyncOpenAI` spends ~7.8 ms of CPU per call converting request
parameters (it walks every message of the history), 129 round trips/s per core with 256 trajectories in flight;
raw aiohttp does ~4,900/s (docs/trust/facts.md). Here the unchanging part of the request (model, tools, sampling) is
serialized once per unit and each message once when it is appended (`Conversation`), so a request costs a byte
join. The openai SDK's own types (`openai.types.chat.ChatCompletion`) still validate each response's shape
(~20 us); what is recorded is the raw JSON, never the parsed model, so nothing is normalized away.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from openai.types.chat import ChatCompletion
from pydantic import ValidationError

from eval.agent.errors import ContextLengthError, InfraError

# Phrases vLLM (and OpenAI) use when a prompt does not fit the context window (HTTP 400).
_CONTEXT_PHRASES = ("maximum context length", "context length", "reduce the length", "too many tokens")


@dataclass(frozen=True)
class ClientConfig:
    """Everything fixed for one unit's requests; serialized once into the request prefix."""

    base_url: str
    model: str
    max_tokens: int
    tools: list[dict[str, Any]]
    tool_choice: str | None
    sampling: dict[str, Any] = field(default_factory=dict)
    return_token_ids: bool = True
    timeout_s: float = 900.0
    retries: int = 3
    backoff_s: float = 0.5

    def request_prefix(self) -> bytes:
        """`{...fixed fields..., "messages":[` as bytes; a request is prefix + messages + `]}`."""
        fixed: dict[str, Any] = {"model": self.model, "max_tokens": self.max_tokens, **self.sampling}
        if self.tools:
            fixed["tools"] = self.tools
            if self.tool_choice is not None:
                fixed["tool_choice"] = self.tool_choice
        if self.return_token_ids:
            fixed["return_token_ids"] = True
        text = json.dumps(fixed, ensure_ascii=False, separators=(",", ":"))
        return (text[:-1] + ',"messages":[').encode("utf-8")

    @property
    def url(self) -> str:
        base = self.base_url.rstrip("/")
        return base + ("/chat/completions" if base.endswith("/v1") else "/v1/chat/completions")


class Conversation:
    """The message list as pre-serialized JSON pieces: appending serializes one message, never the history."""

    __slots__ = ("_buf", "count")

    def __init__(self, prefix: bytes) -> None:
        self._buf = bytearray(prefix)
        self.count = 0

    def append(self, message: dict[str, Any]) -> None:
        if self.count:
            self._buf += b","
        self._buf += json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        self.count += 1

    def body(self) -> bytes:
        return bytes(self._buf) + b"]}"


@dataclass
class ModelReply:
    """One model response, as returned (see results/README.md, trajectory.jsonl)."""

    request_id: str
    server: str
    latency_s: float
    finish_reason: str | None
    content: str | None
    reasoning_content: str | None
    tool_calls: list[dict[str, Any]] | None
    token_ids: list[int] | None
    prompt_token_ids: list[int] | None
    usage: dict[str, Any] | None
    message: dict[str, Any]

    def record(self) -> dict[str, Any]:
        """The response fields of a trajectory line."""
        return {
            "request_id": self.request_id,
            "server": self.server,
            "latency_s": round(self.latency_s, 6),
            "finish_reason": self.finish_reason,
            "content": self.content,
            "reasoning_content": self.reasoning_content,
            "tool_calls": self.tool_calls,
            "token_ids": self.token_ids,
            "prompt_token_ids": self.prompt_token_ids,
            "usage": self.usage,
        }


class _Retryable(Exception):
    """A request failure worth retrying: connection error, timeout, 5xx/429, unparsable or invalid body."""


def parse_reply(data: Any, server: str, latency_s: float, header_id: str) -> ModelReply:
    """Check the response's shape with the openai SDK's types, then keep the raw fields (never the parsed ones)."""
    try:
        ChatCompletion.model_validate(data)
    except ValidationError as e:
        raise _Retryable(f"response is not a chat completion: {_one_line(str(e))}") from None
    if not data["choices"]:
        raise _Retryable("response has no choices")
    choice = data["choices"][0]
    message = choice["message"]
    reasoning = message.get("reasoning_content")
    if reasoning is None:
        reasoning = message.get("reasoning")  # vLLM >= 0.30 renamed the field
    return ModelReply(
        request_id=data.get("id") or header_id,
        server=server,
        latency_s=latency_s,
        finish_reason=choice.get("finish_reason"),
        content=message.get("content"),
        reasoning_content=reasoning,
        tool_calls=message.get("tool_calls"),
        token_ids=choice.get("token_ids"),
        prompt_token_ids=data.get("prompt_token_ids"),
        usage=data.get("usage"),
        message=message,
    )


def _one_line(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "..."


class ChatClient:
    """Sends pre-serialized chat requests to one server; retries transient failures, then raises InfraError."""

    def __init__(self, session: aiohttp.ClientSession, config: ClientConfig) -> None:
        self.session = session
        self.config = config
        self._url = config.url
        self._timeout = aiohttp.ClientTimeout(total=config.timeout_s)

    async def complete(self, body: bytes, request_id: str) -> ModelReply:
        """One chat completion. ContextLengthError on a context-window 400; InfraError once retries are spent."""
        last = ""
        for attempt in range(self.config.retries + 1):
            if attempt:
                await asyncio.sleep(self.config.backoff_s * 2 ** (attempt - 1))
            try:
                return await self._once(body, f"{request_id}-a{attempt}")
            except _Retryable as e:
                last = str(e)
        raise InfraError(f"{last} (after {self.config.retries + 1} attempts)")

    async def _once(self, body: bytes, request_id: str) -> ModelReply:
        headers = {"Content-Type": "application/json", "X-Request-Id": request_id}
        start = time.perf_counter()
        try:
            async with self.session.post(self._url, data=body, headers=headers, timeout=self._timeout) as resp:
                raw = await resp.read()
                status = resp.status
                header_id = resp.headers.get("x-request-id", request_id)
        except (aiohttp.ClientError, TimeoutError, OSError) as e:
            raise _Retryable(f"{type(e).__name__}: {_one_line(str(e)) or 'no detail'}") from None
        latency = time.perf_counter() - start
        if status >= 500 or status == 429:
            raise _Retryable(f"HTTP {status}: {_one_line(raw.decode('utf-8', 'replace'))}")
        if status >= 400:
            text = raw.decode("utf-8", "replace")
            if status == 400 and any(p in text.lower() for p in _CONTEXT_PHRASES):
                raise ContextLengthError(_one_line(text))
            raise InfraError(f"HTTP {status}: {_one_line(text)}")
        try:
            data = json.loads(raw)
        except ValueError:
            text = raw[:300].decode("utf-8", "replace")
            raise _Retryable(f"HTTP {status} with a body that is not JSON: {_one_line(text)}") from None
        return parse_reply(data, self.config.base_url, latency, header_id)
