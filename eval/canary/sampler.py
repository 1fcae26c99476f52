"""Probe modes for the sampler and the scheduler (issue 16): what users send, where historical bugs lived.

- `sampler_mix`: one batch of concurrent requests on one prompt, each with its own sampling parameters (none;
  presence + frequency penalties; `min_tokens` with `stop_token_ids`; `allowed_token_ids`), logprobs asked for on every
  one. Speculative decoding must apply each request's logits processors to its draft rows too (PR #19482
  penalties, PR #32642 min_tokens) and return the raw logprobs (PR #30846). The judgement (eval/canary/judge.py)
  knows the parameters, so it checks that every chosen token is the argmax of the processed distribution.
- `chunked_tail`: a fresh prompt whose last chunked-prefill chunk is short (1 to 6 tokens: at most K+1 for MTP
  K=5), sent while another request decodes (PR #35447 / #37303: a short extend processed as a speculative
  decode). The server needs a small token budget (`max_num_batched_tokens`, below the block size) for the
  prompt to be chunked at all: a setting of the zoo's cohort files, documented in docs/trust/canary.md.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from eval.canary.client import Reply
from eval.canary.records import SAMPLER_ROLES, ProbeRecord

# Last-chunk sizes, cycled over the probe index: 1 to K+1 for MTP K=5.
CHUNK_TAILS = (1, 2, 3, 4, 5, 6)


def sampler_params(ctx: Any, index: int, max_tokens: int) -> dict[str, dict[str, Any]]:
    """Role -> the request's sampling parameters (deterministic per seed and index; the same on every cohort)."""
    book = ctx.book
    stops = sorted(set(book.ids(f"sampler-stop-{index}", 256)))
    allowed = sorted(set(book.ids(f"sampler-allowed-{index}", 128)))
    return {
        "plain": {},
        "penalties": {"presence_penalty": 1.5, "frequency_penalty": 1.0},
        "min_tokens": {"min_tokens": max(1, max_tokens // 2), "stop_token_ids": stops},
        # logit_bias and min_p: vLLM 0.32 answers 400 with speculative decoding; allowed_token_ids is the
        # mask that does reach draft rows (RejectionSampler.apply_logits_processors).
        "allowed_tokens": {"allowed_token_ids": allowed},
    }


async def sampler_mix(ctx: Any, index: int) -> list[ProbeRecord]:
    from eval.canary.modes import record

    cfg = ctx.cfg
    prompt = ctx.book.ids(f"sampler-{index}", cfg.block_size + 37)
    params = sampler_params(ctx, index, cfg.max_tokens)
    calls = [ctx.client.complete(prompt, cfg.max_tokens, params[r], cfg.logprobs) for r in SAMPLER_ROLES]
    replies = await asyncio.gather(*calls)
    recs = []
    for role, reply in zip(SAMPLER_ROLES, replies, strict=True):
        rec = record(ctx, "sampler_mix", index, role, prompt, reply)
        rec.params = params[role]
        recs.append(rec)
    return recs


def chunked_length(block_size: int, tail: int) -> int:
    """A prompt one block plus `tail` tokens long.

    In Mamba `align` cache mode, prefill chunks end at block boundaries; with a token budget below the block
    size (`max_num_batched_tokens` 32 with blocks of 64) a chunk advances sub-block and stops at the boundary, so the
    prompt's last chunk is exactly `tail` tokens. Without align mode (or with budgets of a block or more) the
    last chunk is other residues; the probe still sends the same lengths, so every cohort gets the same requests.
    """
    return block_size + tail


async def chunked_tail(ctx: Any, index: int) -> list[ProbeRecord]:
    from eval.canary.modes import FIRST_TOKEN_TIMEOUT_S, record

    cfg = ctx.cfg
    tail = CHUNK_TAILS[index % len(CHUNK_TAILS)]
    prompt = ctx.book.ids(f"chunked-{index}", chunked_length(cfg.block_size, tail))
    other = ctx.book.ids(f"chunked-other-{index}", 16)
    live = Reply()
    stream = asyncio.create_task(ctx.client.stream(other, cfg.concurrent_max_tokens, live, cfg.logprobs))
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(live.first_token.wait(), FIRST_TOKEN_TIMEOUT_S)
    target = await ctx.client.complete(prompt, cfg.max_tokens, logprobs=cfg.logprobs)
    background = await stream
    overlapped = not target.error and not background.error and background.ended_at > target.started_at
    recs = [
        record(ctx, "chunked_tail", index, "target", prompt, target),
        record(ctx, "chunked_tail", index, "concurrent", other, background),
    ]
    for r in recs:
        r.overlapped = overlapped
        r.extra["last_chunk_tokens"] = tail
    return recs
