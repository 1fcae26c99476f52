"""Agent-like chats at several concurrencies through a cohort's stack, compared token by token with a reference.

The question it answers (issue 19, item 3): on a NIXL prefill/decode stack every decode request starts with a
one-token prompt tail; with PR 55178 reverted and MTP 5, how many ordinary agent requests (fresh multi-turn
chats of ~200-400 tokens with a tool, through the chat API, several in flight) come back corrupted?

    python benchmarks/bench_pd_mamba_cpu.py cohorts/pd-mamba-cpu.yaml \
        --cohorts fixed-off-single fixed-off-pd fixed-reverted-mtp5-pd --chats 16 --concurrency 1 2 4 \
        --out /tmp/pd-bench.json

The first cohort is the reference. Each cohort's stack is started, used and stopped before the next one (one
stack at a time on a small machine); `--url COHORT=URL` uses a stack that is already running instead
(`specqual serve FILE --cohort COHORT`). Greedy, `ignore_eos`, fixed `--max-tokens`: every position is compared.
Per stack it also reads each vLLM process's `/metrics` before and after: `prompt_tokens_by_source`
(`local_compute` on the decode worker = the tokens it computed itself; one per request on P/D) and the
speculative-decoding counters, and where a request's time went: per process, the mean of vLLM's request
histograms (`PHASES`; on the decode worker `request_queue_time` is the wait for the NIXL read) next to the
client's per-request latency. One warm-up chat per stack first (a P/D stack's first request pays the NIXL
handshake). Prints a JSON summary and writes it (with every output) to `--out`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import sys
import time
import urllib.request
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any

from eval.canary.client import CanaryClient, Reply
from eval.canary.modes import TOOLS, agent_chat
from eval.canary.prompts import PromptBook, local_tokenizer

COUNTERS = re.compile(
    r"^vllm:(prompt_tokens_by_source_total|spec_decode_num_draft_tokens_total|spec_decode_num_accepted_tokens_total"
    r"|(?:e2e_request_latency|request_queue_time|request_prefill_time|request_decode_time|time_to_first_token"
    r"|nixl_xfer_time)_seconds_(?:sum|count))"
    r"(?:\{([^}]*)\})? ([0-9.e+]+)$",
    re.M,
)
# Per process, where a P/D request's time goes (Δsum / Δcount of vLLM's request histograms): on the decode worker
# `request_queue_time` is the wait for the NIXL read (the request sits in WAITING_FOR_REMOTE_KVS), `nixl_xfer_time`
# the transfers themselves; on the prefill worker `e2e_request_latency` is its whole part.
PHASES = ("e2e_request_latency", "request_queue_time", "request_prefill_time", "request_decode_time", "nixl_xfer_time")


def counters(metrics_url: str) -> dict[str, float]:
    """The counters this benchmark reads from one vLLM process (`name` or `name:source`)."""
    try:
        text = urllib.request.urlopen(metrics_url, timeout=60).read().decode()
    except OSError as e:  # a worker that died or restarts mid-run: its counters are unknown, not zero
        print(f"bench: {metrics_url}: {e}", file=sys.stderr)
        return {}
    out: dict[str, float] = {}
    for name, labels, value in COUNTERS.findall(text):
        source = re.search(r'source="([^"]+)"', labels or "")
        key = name.removesuffix("_total") + (f":{source.group(1)}" if source else "")
        out[key] = out.get(key, 0.0) + float(value)
    return out


def chats(book: PromptBook, n: int) -> list[list[dict[str, Any]]]:
    """n fresh agent conversations (1-3 tool rounds: about 200-400 prompt tokens with the tool schema)."""
    return [agent_chat(book, f"pd-bench-{i}", 1 + i % 3) for i in range(n)]


async def send_all(url: str, model: str, convs: list[list[dict[str, Any]]], concurrency: int, n: int) -> list[Reply]:
    client = CanaryClient(url, model, seed=0)
    gate = asyncio.Semaphore(concurrency)

    async def one(conv: list[dict[str, Any]]) -> Reply:
        async with gate:
            return await client.chat(conv, TOOLS, "auto", n)

    try:
        return list(await asyncio.gather(*(one(c) for c in convs)))
    finally:
        await client.aclose()


def first_divergence(a: list[int] | None, b: list[int] | None) -> int | None:
    if a is None or b is None:
        return None
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return i
    return None if len(a) == len(b) else min(len(a), len(b))


def delta(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    return {k: after[k] - before.get(k, 0.0) for k in sorted(after)}


def phases(d: dict[str, float]) -> dict[str, float]:
    """Mean seconds per request of each phase histogram in one process's counter deltas."""
    out = {}
    for name in PHASES:
        n = d.get(f"{name}_seconds_count", 0.0)
        if n:
            out[name] = round(d.get(f"{name}_seconds_sum", 0.0) / n, 3)
    return out


def latency(replies: list[Reply]) -> dict[str, float]:
    """Per-request wall seconds as the client saw them (mean, median, max)."""
    lat = sorted(r.latency_s for r in replies)
    return {"mean": round(statistics.fmean(lat), 2), "median": round(statistics.median(lat), 2), "max": lat[-1]}


def run_level(
    base: str, served: str, metrics: list[str], book: PromptBook, c: int, args: argparse.Namespace
) -> dict[str, Any]:
    """One batch of chats at concurrency `c`: outputs, client latency and per-process counter deltas."""
    before = [counters(m) for m in metrics]
    t0 = time.monotonic()
    replies = asyncio.run(send_all(base, served, chats(book, args.chats), c, args.max_tokens))
    took = round(time.monotonic() - t0, 1)
    after = [counters(m) for m in metrics]
    deltas = [delta(b, a) for b, a in zip(before, after, strict=True)]
    level: dict[str, Any] = {
        "concurrency": c,
        "chats_s": took,
        "latency_s": latency(replies),
        "phases": [{"url": m, **phases(d)} for m, d in zip(metrics, deltas, strict=True)],
        "counters": [{"url": m, **d} for m, d in zip(metrics, deltas, strict=True)],
        "replies": [
            {
                "prompt_tokens": r.prompt_tokens,
                "output_ids": r.output_ids,
                "text": r.text,
                "error": r.error,
                "latency_s": r.latency_s,
            }
            for r in replies
        ],
    }
    print(
        f"bench:   concurrency {c}: {took} s, latency {level['latency_s']}, phases {level['phases']}",
        file=sys.stderr,
        flush=True,
    )
    return level


def run_cohort(loaded: Any, name: str, url: str | None, model: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Start the cohort's stack (unless `url`), send the chats at each concurrency, return outputs and counters.

    One warm-up chat first: a P/D stack's first request also pays the NIXL handshake (reported as `warmup_s`).
    """
    from eval.executors import pick
    from eval.stacks import ensure_build

    cohort = loaded.cohort(name)
    stack: AbstractContextManager[Any]
    if url is None:
        build = ensure_build(loaded.spec, cohort.factors["build"])
        stack = pick(loaded).stack(cohort, model, args.run_dir, build)
    else:
        stack = nullcontext(None)
    started = time.monotonic()
    with stack as s:
        ready_s = round(time.monotonic() - started, 1)
        base = url or s.base_url
        metrics = args.metrics or [f"{base}/metrics"] if s is None else s.metrics_urls
        tokenize = local_tokenizer(model)
        if tokenize is None:
            raise SystemExit(f"no tokenizer.json in {model}")
        book = PromptBook(tokenize, 0)
        served = cohort.model.served_name
        t0 = time.monotonic()
        warm = asyncio.run(send_all(base, served, [agent_chat(book, "pd-bench-warmup", 1)], 1, args.max_tokens))
        warmup_s = round(time.monotonic() - t0, 1)
        levels = [run_level(base, served, metrics, book, c, args) for c in args.concurrency]
    return {
        "cohort": name,
        "ready_s": None if url else ready_s,
        "warmup_s": warmup_s,
        "warmup_error": warm[0].error,
        "levels": levels,
    }


def compare(ref: dict[str, Any], other: dict[str, Any]) -> dict[str, Any]:
    """Each concurrency level's outputs against the reference's outputs at its first level (greedy)."""
    ref_replies = ref["levels"][0]["replies"]
    out: dict[str, Any] = {
        "cohort": other["cohort"],
        "reference": ref["cohort"],
        "ready_s": other["ready_s"],
        "warmup_s": other["warmup_s"],
        "levels": [],
    }
    for level in other["levels"]:
        replies = level["replies"]
        firsts = [first_divergence(a["output_ids"], b["output_ids"]) for a, b in zip(ref_replies, replies, strict=True)]
        diverged = [f for f in firsts if f is not None]
        prompts = [r["prompt_tokens"] for r in replies if r["prompt_tokens"]]
        out["levels"].append(
            {
                "concurrency": level["concurrency"],
                "chats": len(firsts),
                "errors": sum(1 for r in replies if r["error"]),
                "diverged": len(diverged),
                "first_divergent_token": sorted(diverged),
                "prompt_tokens_range": [min(prompts), max(prompts)] if prompts else None,
                "chats_s": level["chats_s"],
                "latency_s": level["latency_s"],
                "phases": level["phases"],
                "counters": level["counters"],
            }
        )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cohort_file")
    ap.add_argument("-c", "--config", action="append", default=[], help="cohort-file override KEY=VALUE")
    ap.add_argument("--cohorts", nargs="+", required=True, help="the first one is the reference")
    ap.add_argument("--url", action="append", default=[], help="COHORT=URL of a stack that is already running")
    ap.add_argument("--metrics", nargs="+", default=[], help="with --url: the workers' /metrics URLs")
    ap.add_argument("--chats", type=int, default=16)
    ap.add_argument("--concurrency", type=int, nargs="+", default=[4], help="one batch of chats per level")
    ap.add_argument("--max-tokens", type=int, default=32)
    ap.add_argument("--run-dir", type=Path, default=None, help="stack logs and stack.json (default: a temp dir)")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()

    from eval.spec.load import load_spec
    from eval.stacks.models import model_dir

    loaded = load_spec([args.cohort_file, *args.config])
    urls = dict(u.split("=", 1) for u in args.url)
    model = model_dir(loaded.spec)
    results = []
    for name in args.cohorts:
        print(f"bench: {name} ...", file=sys.stderr, flush=True)
        results.append(run_cohort(loaded, name, urls.get(name), model, args))
        print(f"bench: {name} done: {json.dumps(compare(results[0], results[-1]))}", file=sys.stderr, flush=True)
    summary = [compare(results[0], r) for r in results[1:]]
    args.out.write_text(json.dumps({"schema_version": 1, "summary": summary, "runs": results}, indent=1))
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
