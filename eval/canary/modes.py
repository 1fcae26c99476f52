"""The probe modes: each builds its requests, sends them and returns one `ProbeRecord` per request.

- `prefix_hit`: warm a block-aligned prompt (`warm_blocks` blocks + `extra_warm_tokens`), then send its first
  `warm_blocks` blocks plus one new token: the cache serves all but one prompt token (the PR #55178 trigger: the
  one-token tail is padded to K+1 rows under MTP).
- `prefix_hit_concurrent`: the same while another, streaming request is decoding (both are compared).
- `fresh`: a never-seen prompt of the same length (control: no prefix hit).
- `tool_aba`: one tool-call chat before (A1), during (B) and after (A2) a burst of agent-like chats that share
  its prefix: state or prefix-cache poisoning that outlives a request shows up in B or A2. The chat is padded to
  one token past a block boundary, so B and A2 are also prefix hits with a one-token tail.
On P/D stacks the transferred state plays the role of the prefix hit; the requests are the same. With a hybrid
Mamba model, vLLM's NixlConnector transfers the state after prompt token N-1 and the decode worker computes token N
itself, so every mode's request reaches the decode worker with a one-token tail: `prefix_hit_concurrent` is the
trigger there (the tail arrives while another request decodes), `fresh` the same tail with nothing running.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from eval.canary.client import CanaryClient, Reply
from eval.canary.prompts import PromptBook
from eval.canary.records import ProbeRecord, probe_id
from eval.spec.models import CanaryWorkload

FIRST_TOKEN_TIMEOUT_S = 300


@dataclass
class ProbeContext:
    client: CanaryClient
    book: PromptBook
    cfg: CanaryWorkload
    cohort: str
    tool_choice: str
    fuzz: Any = None  # eval.canary.fuzz.generate.GenContext of the `fuzz` mode (built by eval/canary/run.py)
    out_dir: Any = None  # the cohort directory the records go to (the fuzz mode writes as it goes)
    disaggregated: bool = False  # a P/D stack: no prompt-logprob re-scoring there (vllm#50792)
    kv_faults: Any = None  # injected KV load faults of the server (eval/canary/fuzz/space.py kv_faults_of)


def record(ctx: ProbeContext, mode: str, index: int, role: str, prompt: list[int] | None, reply: Reply) -> ProbeRecord:
    rec = ProbeRecord(
        probe_id=probe_id(mode, index, role),
        cohort=ctx.cohort,
        mode=mode,
        index=index,
        role=role,
        prompt_token_ids=prompt if prompt is not None else reply.prompt_ids,
        prompt_tokens=reply.prompt_tokens,
        cached_tokens=reply.cached_tokens,
        output_token_ids=None if reply.error else reply.output_ids,
        output_text=reply.text,
        finish_reason=reply.finish_reason,
        latency_s=reply.latency_s,
        server=ctx.client.base_url,
        infra_error=reply.error,
        output_token_logprobs=None if reply.error else reply.token_logprobs,
        output_top_logprobs=None if reply.error else reply.top_logprobs,
    )
    if reply.prompt_tokens is not None and reply.cached_tokens is not None:
        # The prompt tokens the serving worker computed itself: 1 for a one-token tail (after a prefix hit, or
        # on a P/D decode worker after the KV transfer).
        rec.extra["tail_tokens"] = reply.prompt_tokens - reply.cached_tokens
    return rec


def _failed(reason: str) -> Reply:
    return Reply(error=reason)


async def prefix_hit(ctx: ProbeContext, index: int, concurrent: bool = False) -> list[ProbeRecord]:
    mode = "prefix_hit_concurrent" if concurrent else "prefix_hit"
    cfg = ctx.cfg
    aligned = cfg.warm_blocks * cfg.block_size
    warm_ids = ctx.book.ids(f"{mode}-warm-{index}", aligned + cfg.extra_warm_tokens)
    prompt = [*warm_ids[:aligned], ctx.book.tail_token(f"{mode}-tail-{index}", warm_ids[aligned])]
    warm = await ctx.client.complete(warm_ids, 1)
    if not concurrent:
        reply = (
            await ctx.client.complete(prompt, cfg.max_tokens, logprobs=cfg.logprobs)
            if not warm.error
            else _failed(f"warm: {warm.error}")
        )
        return [record(ctx, mode, index, "target", prompt, reply)]
    other = ctx.book.ids(f"{mode}-other-{index}", cfg.block_size + 37)
    live = Reply()
    stream = asyncio.create_task(ctx.client.stream(other, cfg.concurrent_max_tokens, live, cfg.logprobs))
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(live.first_token.wait(), FIRST_TOKEN_TIMEOUT_S)
    if warm.error:
        target = _failed(f"warm: {warm.error}")
    else:
        target = await ctx.client.complete(prompt, cfg.max_tokens, logprobs=cfg.logprobs)
    background = await stream
    overlapped = not target.error and not background.error and background.ended_at > target.started_at
    recs = [
        record(ctx, mode, index, "target", prompt, target),
        record(ctx, mode, index, "concurrent", other, background),
    ]
    for r in recs:
        r.overlapped = overlapped
    return recs


async def fresh(ctx: ProbeContext, index: int) -> list[ProbeRecord]:
    cfg = ctx.cfg
    prompt = ctx.book.ids(f"fresh-{index}", cfg.warm_blocks * cfg.block_size + 1)
    reply = await ctx.client.complete(prompt, cfg.max_tokens, logprobs=cfg.logprobs)
    return [record(ctx, "fresh", index, "target", prompt, reply)]


TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "bash",
            "description": "Run a shell command in the repository and return its output.",
            "parameters": {
                "type": "object",
                "properties": {"command": {"type": "string", "description": "the command"}},
                "required": ["command"],
            },
        },
    }
]


def agent_chat(book: PromptBook, key: str, turns: int) -> list[dict[str, Any]]:
    """An agent-like conversation: task, tool calls with their outputs, `turns` rounds."""
    msgs: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a coding agent. Use the bash tool, then answer."},
        {"role": "user", "content": f"Fix the failing test: {book.text(key + '-task', 40)}"},
    ]
    for t in range(turns):
        args = '{"command": "grep -rn ' + book.text(f"{key}-cmd-{t}", 2) + ' src"}'
        call = {"id": f"call_{t}", "type": "function", "function": {"name": "bash", "arguments": args}}
        msgs.append({"role": "assistant", "content": None, "tool_calls": [call]})
        msgs.append({"role": "tool", "tool_call_id": f"call_{t}", "content": book.text(f"{key}-out-{t}", 60)})
    return msgs


async def sized_chat(ctx: ProbeContext, index: int) -> list[dict[str, Any]]:
    """The A chat, its last tool output padded so that its prompt is one token past a block boundary.

    A sizing request reads the rendered prompt length; the padding (" a" words, usually one token each) makes
    a later identical request hit the cache for every block but leave one prompt token: B and A2 then also
    carry the PR 55178 trigger, in tool-call form. Best effort: the record's `extra.tail_tokens` says what the
    server actually left uncached.
    """
    chat = agent_chat(ctx.book, f"tool-{index}", 2)
    sizing = await ctx.client.chat(chat, TOOLS, ctx.tool_choice, 1)
    if sizing.error is None and sizing.prompt_tokens:
        chat[-1]["content"] += " a" * ((1 - sizing.prompt_tokens) % ctx.cfg.block_size)
    return chat


async def tool_aba(ctx: ProbeContext, index: int) -> list[ProbeRecord]:
    cfg, book = ctx.cfg, ctx.book
    chat = await sized_chat(ctx, index)

    async def ask() -> Reply:
        return await ctx.client.chat(chat, TOOLS, ctx.tool_choice, cfg.max_tokens, cfg.logprobs)

    a1 = await ask()
    burst = [[*agent_chat(book, f"tool-{index}", 2)[:-1], _variant(book, index, k)] for k in range(cfg.tool_burst)]
    tasks = [asyncio.create_task(ctx.client.chat(m, TOOLS, ctx.tool_choice, cfg.max_tokens)) for m in burst]
    await asyncio.sleep(0)
    b = await ask()
    burst_replies = await asyncio.gather(*tasks)
    a2 = await ask()
    recs = [
        record(ctx, "tool_aba", index, role, None, r) for role, r in (("tool_a1", a1), ("tool_b", b), ("tool_a2", a2))
    ]
    errors = sum(1 for r in burst_replies if r.error)
    for r in recs:
        r.extra["burst_requests"] = len(burst)
        r.extra["burst_errors"] = errors
    return recs


def _variant(book: PromptBook, index: int, k: int) -> dict[str, Any]:
    """The burst's last message: the same tool call answered with a different output (shared prefix)."""
    return {"role": "tool", "tool_call_id": "call_1", "content": book.text(f"tool-{index}-burst-{k}", 60)}


ModeFn = Callable[[ProbeContext, int], Awaitable[list[ProbeRecord]]]


async def _prefix_hit_concurrent(ctx: ProbeContext, index: int) -> list[ProbeRecord]:
    return await prefix_hit(ctx, index, concurrent=True)


def _modes() -> dict[str, ModeFn]:
    from eval.canary.sampler import chunked_tail, sampler_mix

    return {
        "prefix_hit": prefix_hit,
        "prefix_hit_concurrent": _prefix_hit_concurrent,
        "fresh": fresh,
        "tool_aba": tool_aba,
        "sampler_mix": sampler_mix,
        "chunked_tail": chunked_tail,
    }


MODES: dict[str, ModeFn] = _modes()
