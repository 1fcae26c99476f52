"""Probe one cohort's running server in sampled mode, re-scoring every draw on the reference server as it goes.

Batches of `batch` concurrent draws go to the cohort; each finished draw is re-scored on the reference and judged;
after each batch the sequential test is read, and probing stops once it decided (FAIL or PASS), at `max_draws`,
or at `budget_s`. Every draw is appended to `draws.jsonl`; `sampled.json` (the verdict, written last, atomically)
holds the summary and the test's path over time.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from eval.canary.client import HEALTH_WAIT_S, wait_healthy
from eval.canary.sampled.draws import Draw, plan_draw, sample, warm, warm_prompt
from eval.canary.sampled.judge import DrawVerdict, judge_draw
from eval.canary.sampled.reference import ReferenceError, rescore
from eval.canary.sampled.stats import Decision, SequentialTest
from eval.spec.workloads import SampledWorkload
from store.atomic import append_line, atomic_write_json
from store.canary_records import SampledSummary

RESCORE_CONCURRENCY = 4


@dataclass
class Target:
    """A server to talk to: its base URL and served model name."""

    base_url: str
    model: str


def make_test(cfg: SampledWorkload, dtype: str) -> SequentialTest:
    return SequentialTest(
        alpha=cfg.alpha, alpha_eq=cfg.alpha_eq, tolerance=cfg.tolerance, slack=cfg.slack.get(dtype, 0.0)
    )


async def _judge(
    ref: httpx.AsyncClient,
    target: Target,
    cfg: SampledWorkload,
    draw: Draw,
    vocab: int,
    slack: float,
    gate: asyncio.Semaphore,
) -> DrawVerdict | None:
    if draw.error is not None or not draw.output:
        return None
    async with gate:
        logprobs = await rescore(ref, target.model, draw.prompt, draw.output, vocab, cfg.reference_logprobs)
    return judge_draw(draw, logprobs, cfg.seed, slack, cfg.near_tie_nats)


async def probe_sampled(
    cohort: Target,
    reference: Target,
    cfg: SampledWorkload,
    vocab: int,
    dtype: str,
    out_dir: Path,
    name: str,
    measure_decode: bool = False,
) -> dict[str, Any]:
    """Probe until decided or out of budget; write draws.jsonl and sampled.json under `out_dir`; return the
    summary. `measure_decode`: also ask the cohort for its full-vocabulary logprobs of each step and measure their
    TV from the re-scored law (on the reference probed against itself: rounding between decode and prefill)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    draws_path = out_dir / "draws.jsonl"
    draws_path.unlink(missing_ok=True)
    test = make_test(cfg, dtype)
    slack = cfg.support_slack_nats.get(dtype, 0.0)
    path: list[dict[str, Any]] = []
    tvs: list[float] = []
    gaps: list[float] = []
    counts = {
        "draws": 0,
        "errors": 0,
        "greedy_violations": 0,
        "boundary_ties": 0,
        "greedy_tokens": 0,
        "inexact_tokens": 0,
    }
    # A stack the watchdog is restarting (an API server too loaded to answer /health is restarted) gets time to
    # come back before this run starts: its draws would only record connection errors (INFRA).
    await wait_healthy(cohort.base_url, HEALTH_WAIT_S)
    await wait_healthy(reference.base_url, HEALTH_WAIT_S)
    t0 = time.monotonic()
    gate = asyncio.Semaphore(RESCORE_CONCURRENCY)
    limits = httpx.Limits(max_connections=cfg.batch + 4)
    async with (
        httpx.AsyncClient(base_url=cohort.base_url, timeout=600, limits=limits) as http,
        httpx.AsyncClient(base_url=reference.base_url, timeout=600) as ref,
    ):
        index = 0
        while index < cfg.max_draws and time.monotonic() - t0 < cfg.budget_s:
            batch = [plan_draw(cfg, vocab, i) for i in range(index, min(index + cfg.batch, cfg.max_draws))]
            index += len(batch)
            if any(d.prefix_hit for d in batch):
                try:
                    await warm(http, cohort.model, warm_prompt(cfg, vocab))
                except (httpx.HTTPError, ValueError) as e:
                    for d in batch:
                        d.error = f"warm-up failed: {type(e).__name__}: {e}"[:500]
            done = [d for d in batch if d.error is not None]
            if done:  # the server is gone: record the batch as errors and stop (INFRA)
                for draw in done:
                    _count(test, counts, draw, None)
                    append_line(draws_path, {**draw.record(), "verdict": None})
                break

            async def one(d: Draw) -> Draw:
                if d.prefix_hit and cfg.hit_delay_s > 0:  # join the batch's running decodes
                    await asyncio.sleep(cfg.hit_delay_s)
                k = cfg.reference_logprobs
                return await sample(http, cohort.model, cfg.max_tokens, d, vocab, measure_decode, k)

            done = await asyncio.gather(*(one(d) for d in batch))
            verdicts = await asyncio.gather(*(_judge(ref, cohort, cfg, d, vocab, slack, gate) for d in done))
            for draw, verdict in zip(done, verdicts, strict=True):
                _count(test, counts, draw, verdict)
                tvs += verdict.decode_tv if verdict else []
                gaps += verdict.decode_gap if verdict else []
                append_line(draws_path, {**draw.record(), "verdict": verdict.record() if verdict else None})
            path.append({"t_s": round(time.monotonic() - t0, 2), **test.summary()})
            if _decision(test, counts) is not Decision.UNDECIDED or all(d.error for d in done):
                break  # decided, or the server stopped answering (INFRA)
    summary = _summary(name, cfg, dtype, test, counts, time.monotonic() - t0, path)
    if measure_decode:
        summary["decode_tv"] = _describe(tvs)
        summary["decode_logprob_gap"] = _describe(gaps)
    # sampled.json is the typed record store.canary_records.SampledSummary (validated here; its schema_version).
    summary = SampledSummary.model_validate(summary).model_dump(mode="json", exclude_none=True)
    atomic_write_json(out_dir / "sampled.json", summary)
    return summary


def _describe(xs: list[float]) -> dict[str, float | int]:
    if not xs:
        return {"tokens": 0}
    a = np.array(xs)
    return {
        "tokens": int(a.size),
        "mean": float(a.mean()),
        "p99": float(np.percentile(a, 99)),
        "max": float(a.max()),
    }


def _count(test: SequentialTest, counts: dict[str, int], draw: Draw, verdict: DrawVerdict | None) -> None:
    counts["draws"] += 1
    if verdict is None:
        counts["errors"] += 1
        return
    test.add(verdict.pits)
    test.add_support_violation(len(verdict.support_violations))
    counts["greedy_violations"] += len(verdict.greedy_violations)
    counts["boundary_ties"] += len(verdict.boundary_ties)
    counts["inexact_tokens"] += verdict.inexact
    if draw.params is None:
        counts["greedy_tokens"] += len(draw.output)


def _decision(test: SequentialTest, counts: dict[str, int]) -> Decision:
    return Decision.FAIL if counts["greedy_violations"] else test.decision()


def verdict_label(decision: Decision, counts: dict[str, int]) -> str:
    """FAIL / PASS; INCONCLUSIVE when the budget ended undecided; INFRA when no draw was judged."""
    if decision is Decision.UNDECIDED:
        return "INFRA" if counts["draws"] == counts["errors"] else "INCONCLUSIVE"
    return decision.value


def _summary(
    name: str,
    cfg: SampledWorkload,
    dtype: str,
    test: SequentialTest,
    counts: dict[str, int],
    wall: float,
    path: list[dict[str, Any]],
) -> dict[str, Any]:
    decision = _decision(test, counts)
    return {
        "cohort": name,
        "seed": cfg.seed,
        "dtype": dtype,
        "verdict": verdict_label(decision, counts),
        "wall_s": round(wall, 1),
        **counts,
        "test": test.summary(),
        "config": cfg.model_dump(mode="json"),
        "path": path,
    }


__all__ = ["ReferenceError", "Target", "probe_sampled", "verdict_label"]
