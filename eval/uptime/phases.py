"""Canary phases on one server: the same probes when the server is fresh, during the soak and after it.

A probe is a prefix-hit chat in the agent's own format: its prompt is first sent with a one-token budget (the
warm request, which caches the prompt's blocks and, with `mamba_cache_mode: align`, the Mamba state at each
block boundary), then all of the phase's probes are sent at once with a fixed budget (`ignore_eos`), greedy, with
top-k logprobs. So every probe starts from a restored prefix state in a batch row. On a fresh server those rows
have only held one-token warm requests; during and after the soak they held speculative traffic. A warm request
that finds nothing cached after the soak shows that the load evicted the probe's prefix blocks.

Every phase is compared token by token (and judged: eval/canary/judge.py) with the reference cohort's fresh
phase, and with the cohort's own fresh phase.
"""

from __future__ import annotations

import asyncio
import copy
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from eval.canary.client import CanaryClient
from eval.canary.compare import apply_comparison, has_output, judged_corrupted
from eval.canary.records import ProbeRecord, read_records, write_record
from eval.spec.workloads import SoakWorkload
from eval.uptime.plan import PROBE_INSTANCE_BASE, session_chat

FRESH = "fresh"
AFTER = "after"


def during(k: int) -> str:
    return f"during-{k}"


def mode_of(phase: str) -> str:
    return f"uptime-{phase}"


def probe_chat(index: int) -> list[dict[str, Any]]:
    """Probe `index`: turn 2 of a held-out instance the soak never sends (the longer prompt: more cached blocks)."""
    return session_chat(PROBE_INSTANCE_BASE + index, 2)


def uptime_dir(cohort_dir: Path) -> Path:
    return Path(cohort_dir) / "uptime"


async def run_phase(
    client: CanaryClient,
    cfg: SoakWorkload,
    cohort: str,
    phase: str,
    tools: list[dict[str, Any]],
    tool_choice: str,
    soak_finished: int,
) -> list[ProbeRecord]:
    """Warm every probe's prompt, then send the probes together; one record per probe."""
    chats = [probe_chat(i) for i in range(cfg.probes)]
    started_at = time.time()  # wall clock, like the metrics.jsonl snapshots (the plot marks the phase there)
    warms = [await client.chat(c, tools, tool_choice, 1) for c in chats]
    replies = await asyncio.gather(
        *(client.chat(c, tools, tool_choice, cfg.probe_max_tokens, cfg.logprobs) for c in chats)
    )
    records = []
    for i, (warm, reply) in enumerate(zip(warms, replies, strict=True)):
        rec = ProbeRecord(
            probe_id=f"{mode_of(phase)}-{i:03d}-target",
            cohort=cohort,
            mode=mode_of(phase),
            index=i,
            role="target",
            prompt_token_ids=reply.prompt_ids,
            prompt_tokens=reply.prompt_tokens,
            cached_tokens=reply.cached_tokens,
            output_token_ids=None if reply.error else reply.output_ids,
            output_text=reply.text,
            finish_reason=reply.finish_reason,
            latency_s=reply.latency_s,
            server=client.base_url,
            infra_error=reply.error or (f"warm: {warm.error}" if warm.error else None),
            output_token_logprobs=None if reply.error else reply.token_logprobs,
            output_top_logprobs=None if reply.error else reply.top_logprobs,
        )
        rec.extra.update(
            phase=phase, soak_finished=soak_finished, warm_cached_tokens=warm.cached_tokens, started_at=started_at
        )
        records.append(rec)
    return records


@dataclass
class Side:
    """One phase compared with one other set of outputs (the reference's, or the cohort's own fresh phase)."""

    compared: int = 0
    diverged: int = 0
    corrupted: int = 0
    near_ties: int = 0
    first_divergence: list[int] = field(default_factory=list)  # per corrupted probe: first divergent token


@dataclass
class PhaseSummary:
    phase: str
    soak_finished: int  # soak requests finished when the phase started
    probes: int
    answered: int
    prefix_hits: int  # probes served with cached prompt tokens
    warm_uncached: int  # warm requests that found nothing cached (their blocks were evicted or never cached)
    vs_reference: Side | None
    vs_fresh: Side | None
    started_at: float | None = None  # wall-clock time the phase began (older records: None)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _compare(rec: ProbeRecord, ref: ProbeRecord | None, ref_cohort: str, cfg: SoakWorkload) -> ProbeRecord:
    out = copy.deepcopy(rec)
    apply_comparison(out, ref, ref_cohort, cfg.near_tie_nats, cfg.logprob_tolerance)
    return out


def _side(compared: list[ProbeRecord]) -> Side:
    side = Side()
    for r in compared:
        if r.diverged is None:
            continue
        side.compared += 1
        side.diverged += bool(r.diverged)
        side.near_ties += (r.judgement or {}).get("verdict") == "near_tie"
        if judged_corrupted(r):
            side.corrupted += 1
            side.first_divergence.append(r.first_divergence if r.first_divergence is not None else -1)
    return side


def compare_phase(
    records: list[ProbeRecord],
    cfg: SoakWorkload,
    reference: tuple[str, dict[int, ProbeRecord]] | None,
    fresh: tuple[str, dict[int, ProbeRecord]] | None,
) -> tuple[list[ProbeRecord], PhaseSummary]:
    """Judge a phase against the reference's fresh phase (the records keep that comparison) and against the
    cohort's own fresh phase (kept in `extra.vs_fresh`)."""
    judged: list[ProbeRecord] = []
    vs_ref: list[ProbeRecord] = []
    vs_fresh: list[ProbeRecord] = []
    for rec in records:
        out = copy.deepcopy(rec)
        if reference is not None:
            out = _compare(rec, reference[1].get(rec.index), reference[0], cfg)
            vs_ref.append(out)
        if fresh is not None:
            f = _compare(rec, fresh[1].get(rec.index), fresh[0], cfg)
            vs_fresh.append(f)
            out.extra["vs_fresh"] = {
                "diverged": f.diverged,
                "first_divergence": f.first_divergence,
                "verdict": (f.judgement or {}).get("verdict"),
            }
        judged.append(out)
    first = records[0] if records else None
    summary = PhaseSummary(
        phase=str(first.extra.get("phase")) if first else "",
        soak_finished=int(first.extra.get("soak_finished") or 0) if first else 0,
        probes=len(records),
        answered=sum(1 for r in records if has_output(r)),
        prefix_hits=sum(1 for r in records if (r.cached_tokens or 0) > 0),
        warm_uncached=sum(1 for r in records if not r.extra.get("warm_cached_tokens")),
        vs_reference=_side(vs_ref) if reference is not None else None,
        vs_fresh=_side(vs_fresh) if fresh is not None else None,
        started_at=_started(first),
    )
    return judged, summary


def _started(rec: ProbeRecord | None) -> float | None:
    t = rec.extra.get("started_at") if rec is not None else None
    return float(t) if isinstance(t, int | float) else None


def save(cohort_dir: Path, records: list[ProbeRecord]) -> None:
    for rec in records:
        write_record(uptime_dir(cohort_dir), rec)


def load_phase(cohort_dir: Path, phase: str) -> dict[int, ProbeRecord]:
    """Probe index -> record of one saved phase."""
    mode = mode_of(phase)
    return {r.index: r for r in read_records(uptime_dir(cohort_dir)).values() if r.mode == mode}


def load_all(cohort_dir: Path) -> list[ProbeRecord]:
    """Every saved phase record of a cohort."""
    return [r for r in read_records(uptime_dir(cohort_dir)).values() if r.mode.startswith("uptime-")]
