"""Send a case to one endpoint and record what came back, one `ProbeRecord` per request (per choice with n > 1).

The warm request (role `w`) goes first and alone (it fills the prefix cache); every other request starts at its
`start_ms`, or once the request named in `after` has streamed a token (it then joins a decoding batch), and
`start_ms` after that when both are set (staggered joins, one by one into a batch already decoding). A
request with `abort_after_tokens` is closed by the client mid-stream. HTTP 4xx is recorded as the build's
refusal (`extra.http_status`, `extra.refused`), not as an infra error: a parameter the build does not take is a
fact about the build. Streamed chunks are counted per request (`extra.chunk_tokens`): a chunk of t tokens is one
engine step that kept t - 1 drafts (an upper bound when the server merged steps for a slow client).
A case's engine control calls (`Case.controls`: pause/resume, prefix-cache resets) run beside its requests with
the same timing rules; what each answered is in every record of the case (`extra.controls`), an HTTP error or
404 (no dev-mode endpoints) included: they are facts about the run, never an infra error of a request.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from dataclasses import dataclass, field
from typing import Any

import httpx

from eval.canary.fuzz.case import Case, EngineControl, TimedRequest
from eval.canary.records import ProbeRecord

AFTER_TIMEOUT_S = 120


@dataclass
class Choice:
    ids: list[int] = field(default_factory=list)
    text: str = ""
    token_logprobs: list[float | None] = field(default_factory=list)
    top_logprobs: list[dict[str, float]] = field(default_factory=list)
    finish_reason: str | None = None
    stop_reason: Any = None
    chunks: list[int] = field(default_factory=list)
    tool_calls: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Outcome:
    choices: list[Choice] = field(default_factory=list)
    status: int | None = None
    error: str | None = None
    refused: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached_tokens: int | None = None
    prompt_logprobs: Any = None
    aborted: bool = False
    started_at: float = 0.0
    ended_at: float = 0.0
    first_token: asyncio.Event = field(default_factory=asyncio.Event)


def body_of(req: TimedRequest, model: str, salt: str | None = None) -> dict[str, Any]:
    """The HTTP body: the request's params, token ids returned, logprobs rendered as ids; `salt`: vLLM's
    `cache_salt`, a prefix-cache namespace of its own (a re-run then hits only what it cached itself)."""
    body: dict[str, Any] = {"model": model, "return_token_ids": True, **req.params}
    if salt is not None:
        body["cache_salt"] = salt
    k = body.pop("logprobs", None)
    if req.endpoint == "chat":
        body["messages"] = req.messages or []
        if k:
            body.update(logprobs=True, top_logprobs=k, return_tokens_as_token_ids=True)
    else:
        body["prompt"] = req.prompt_token_ids
        if k:
            body.update(logprobs=k, return_tokens_as_token_ids=True)
    if req.stream:
        body.update(stream=True, stream_options={"include_usage": True})
    return body


def _tok(t: str) -> str:
    return t.removeprefix("token_id:")


def _take(choice: Choice, c: dict[str, Any], chat: bool) -> None:
    ids = [int(t) for t in c.get("token_ids") or []]
    choice.ids += ids
    if ids:
        choice.chunks.append(len(ids))
    lp = c.get("logprobs") or {}
    if chat:
        msg = c.get("delta") or c.get("message") or {}
        choice.text += msg.get("content") or ""
        choice.tool_calls += msg.get("tool_calls") or []
        for e in lp.get("content") or []:
            choice.token_logprobs.append(e.get("logprob"))
            choice.top_logprobs.append(
                {
                    _tok(t["token"]): float(t["logprob"])
                    for t in e.get("top_logprobs") or []
                    if t.get("logprob") is not None
                }
            )
    else:
        choice.text += c.get("text") or ""
        choice.token_logprobs += list(lp.get("token_logprobs") or [])
        for t in lp.get("top_logprobs") or []:
            choice.top_logprobs.append({_tok(k): float(v) for k, v in (t or {}).items() if v is not None})
    if c.get("finish_reason"):
        choice.finish_reason = c["finish_reason"]
        choice.stop_reason = c.get("stop_reason")


def _usage(out: Outcome, data: dict[str, Any]) -> None:
    usage = data.get("usage") or {}
    if usage:
        out.prompt_tokens = usage.get("prompt_tokens")
        out.completion_tokens = usage.get("completion_tokens")
        out.cached_tokens = (usage.get("prompt_tokens_details") or {}).get("cached_tokens")


async def send(
    http: httpx.AsyncClient,
    req: TimedRequest,
    model: str,
    out: Outcome,
    salt: str | None = None,
    others_done: asyncio.Event | None = None,
) -> Outcome:
    path = "/v1/chat/completions" if req.endpoint == "chat" else "/v1/completions"
    body, chat = body_of(req, model, salt), req.endpoint == "chat"
    out.started_at = time.monotonic()
    try:
        if req.stream and req.abort_after_ms is not None:
            try:  # a client timeout: closed whatever it got (the stream keeps out.choices current)
                await asyncio.wait_for(
                    _stream(http, path, body, req, out, chat, others_done), req.abort_after_ms / 1000
                )
            except TimeoutError:
                out.aborted = True
        elif req.stream:
            await _stream(http, path, body, req, out, chat, others_done)
        else:
            resp = await http.post(path, json=body)
            out.status = resp.status_code
            if _refused(out, resp.status_code, resp.text):
                return out
            data = resp.json()
            for c in data.get("choices") or []:
                choice = Choice()
                _take(choice, c, chat)
                out.choices.append(choice)
                if c.get("prompt_logprobs") is not None:
                    out.prompt_logprobs = c["prompt_logprobs"]
            _usage(out, data)
    except (httpx.HTTPError, ValueError, KeyError) as e:
        out.error = f"{type(e).__name__}: {e}"[:400] or type(e).__name__
    finally:
        out.ended_at = time.monotonic()
        out.first_token.set()
    return out


def _refused(out: Outcome, status: int, text: str) -> bool:
    if status == 200:
        return False
    if 400 <= status < 500:
        out.refused = f"HTTP {status}: {text[:300]}"
    else:
        out.error = f"HTTP {status}: {text[:300]}"
    return True


async def _stream(
    http: httpx.AsyncClient,
    path: str,
    body: dict[str, Any],
    req: TimedRequest,
    out: Outcome,
    chat: bool,
    others_done: asyncio.Event | None = None,
) -> None:
    choices: dict[int, Choice] = {}
    async with http.stream("POST", path, json=body) as resp:
        out.status = resp.status_code
        if _refused(
            out, resp.status_code, (await resp.aread()).decode(errors="replace") if resp.status_code != 200 else ""
        ):
            return
        async for line in resp.aiter_lines():
            if not line.startswith("data:") or line[5:].strip() == "[DONE]":
                continue
            data = json.loads(line[5:].strip())
            if "error" in data:
                err = data["error"] if isinstance(data["error"], dict) else {"message": str(data["error"])}
                if err.get("code") == 400 or err.get("type") == "BadRequestError":  # refused after the 200
                    out.refused = f"HTTP 400 (streamed): {str(err.get('message'))[:300]}"
                    break
                raise ValueError(f"engine error after HTTP 200: {str(data['error'])[:300]}")
            _usage(out, data)
            for c in data.get("choices") or []:
                _take(choices.setdefault(int(c.get("index", 0)), Choice()), c, chat)
            tokens = sum(len(c.ids) for c in choices.values())
            out.choices = [choices[i] for i in sorted(choices)]
            if tokens:
                out.first_token.set()
            if req.abort_after_tokens is not None and tokens >= req.abort_after_tokens:
                out.aborted = True
                break
            if req.until_others_done and others_done is not None and others_done.is_set():
                out.aborted = True  # a background request: the others it carried have finished
                break
    out.choices = [choices[i] for i in sorted(choices)]


async def run_case_async(
    case: Case, base_url: str, model: str, timeout_s: float = 600, salt: str | None = None
) -> dict[str, Outcome]:
    """Send every request of `case` to `base_url` with its timing; role -> outcome."""
    outcomes = {r.role: Outcome() for r in case.requests}
    async with httpx.AsyncClient(base_url=base_url.rstrip("/"), timeout=timeout_s) as http:
        for r in case.requests:
            if r.role == "w":
                await send(http, r, model, outcomes[r.role], salt)

        others_done = asyncio.Event()

        async def one(r: TimedRequest) -> None:
            if r.after is not None and r.after in outcomes:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(outcomes[r.after].first_token.wait(), AFTER_TIMEOUT_S)
            if r.start_ms:  # after `after`'s first token when both are set (a staggered join)
                await asyncio.sleep(r.start_ms / 1000)
            await send(http, r, model, outcomes[r.role], salt, others_done)

        async def others() -> None:
            await asyncio.gather(*(one(r) for r in case.requests if r.role != "w" and not r.until_others_done))
            others_done.set()

        async def control(i: int, c: EngineControl) -> None:
            if c.after is not None and c.after in outcomes:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(outcomes[c.after].first_token.wait(), AFTER_TIMEOUT_S)
            if c.start_ms:
                await asyncio.sleep(c.start_ms / 1000)
            outcomes[f"{CONTROL}{i}"] = await engine_control(http, c)

        await asyncio.gather(
            others(),
            *(one(r) for r in case.requests if r.until_others_done),
            *(control(i, c) for i, c in enumerate(case.controls)),
        )
    return outcomes


CONTROL = "control:"  # outcome keys of a case's engine control calls (no request role has a colon)


async def engine_control(http: httpx.AsyncClient, c: EngineControl) -> Outcome:
    """Make one engine control call; its outcome: `status` (the last HTTP status) and `error` (what failed)."""
    out = Outcome(started_at=time.monotonic())
    try:
        if c.action.startswith("pause"):
            mode = {"pause": "keep", "pause_wait": "wait", "pause_abort": "abort"}[c.action]
            resp = await http.post("/pause", params={"mode": mode, "clear_cache": "false"})
            try:
                await asyncio.sleep(c.hold_ms / 1000)
            finally:  # a paused engine would hold every later request: resume whatever /pause answered
                resumed = await http.post("/resume")
            out.status = resumed.status_code if resp.is_success else resp.status_code
        else:
            params = {"reset_running": {"reset_running_requests": "true"}, "reset_external": {"reset_external": "true"}}
            resp = await http.post("/reset_prefix_cache", params=params.get(c.action, {}))
            out.status = resp.status_code
        if out.status >= 400:
            out.error = f"HTTP {out.status}"
    except httpx.HTTPError as e:
        out.error = f"{type(e).__name__}: {e}"[:200]
    out.ended_at = time.monotonic()
    return out


def records_of(case: Case, outcomes: dict[str, Outcome], cohort: str, server: str) -> list[ProbeRecord]:
    """One probe record per request (per choice: role, role~1, role~2 with n > 1)."""
    recs: list[ProbeRecord] = []
    for req in case.requests:
        out = outcomes[req.role]
        choices = out.choices or [Choice()]
        for k, ch in enumerate(choices):
            role = req.role if k == 0 else f"{req.role}~{k}"
            answered = out.error is None and out.refused is None
            rec = ProbeRecord(
                probe_id=f"{case.case_id}-{role}",
                cohort=cohort,
                mode="fuzz",
                index=case.index,
                role=role,
                prompt_token_ids=req.prompt_token_ids or None,
                prompt_tokens=out.prompt_tokens,
                cached_tokens=out.cached_tokens,
                output_token_ids=ch.ids if answered else None,
                output_text=ch.text,
                finish_reason=ch.finish_reason,
                latency_s=round(out.ended_at - out.started_at, 4),
                server=server,
                infra_error=out.error,
                params=req.params,
                output_token_logprobs=ch.token_logprobs if answered and ch.top_logprobs else None,
                output_top_logprobs=ch.top_logprobs if answered and ch.top_logprobs else None,
            )
            if case.controls:
                rec.extra["controls"] = controls_of(case, outcomes)
            rec.extra.update(
                request=req.role,
                features=req.features,
                endpoint=req.endpoint,
                http_status=out.status,
                refused=out.refused,
                aborted=out.aborted or (ch.finish_reason in ("abort", None) and _paused_by_abort(case, outcomes)),
                chunk_tokens=ch.chunks,
                stop_reason=ch.stop_reason,
                tool_calls=ch.tool_calls or None,
                sampled=req.sampled,
                messages=req.messages,
                banned_sequences=req.banned_sequences or None,
                reasoning_end_ids=req.reasoning_end_ids or None,
                after=req.after,
                start_ms=req.start_ms,
                abort_after_tokens=req.abort_after_tokens,
                abort_after_ms=req.abort_after_ms,
                stream=req.stream,
                until_others_done=req.until_others_done or None,
                completion_tokens=out.completion_tokens,
                server_error=out.error is not None and not (out.error or "").startswith(("ConnectError", "Connect")),
            )
            if out.prompt_logprobs is not None and k == 0:
                rec.extra["prompt_logprobs"] = out.prompt_logprobs
            recs.append(rec)
    return recs


def _paused_by_abort(case: Case, outcomes: dict[str, Outcome]) -> bool:
    """A `pause_abort` call of the case succeeded: the server aborted what was running (compared on its prefix; a
    request aborted before its first token ends its stream with no finish reason: cov-sched2-1208 fuzz-001)."""
    return any(
        c.action == "pause_abort" and (out := outcomes.get(f"{CONTROL}{i}")) is not None and out.error is None
        for i, c in enumerate(case.controls)
    )


def controls_of(case: Case, outcomes: dict[str, Outcome]) -> list[dict[str, Any]]:
    """What each engine control call of the case answered (no outcome: it was never made)."""
    done = []
    for i, c in enumerate(case.controls):
        out = outcomes.get(f"{CONTROL}{i}")
        done.append({"action": c.action, "status": out.status if out else None, "error": out.error if out else None})
    return done


def run_case(case: Case, base_url: str, model: str, cohort: str = "", timeout_s: float = 600) -> list[ProbeRecord]:
    """Synchronous wrapper: the case's records on one endpoint."""
    outcomes = asyncio.run(run_case_async(case, base_url, model, timeout_s))
    return records_of(case, outcomes, cohort, base_url)
