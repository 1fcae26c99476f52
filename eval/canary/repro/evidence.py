"""The evidence a reproducer is built from: a failing case and what both servers answered, from probe records.

Fuzz records carry their whole request (params, prompt ids, timing), so a failing fuzz case is rebuilt exactly.
Records of the hand-written modes carry the prompt ids and params of every compared request; their probe is
replayed as one case (the streaming `concurrent` request first, the others once it streams).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eval.canary.fuzz.case import Case, TimedRequest
from eval.canary.records import ProbeRecord, read_records

STREAMED_FIRST = ("concurrent",)


@dataclass
class Evidence:
    cohort: str
    reference: str
    group: str  # fuzz-007, or prefix_hit-003 for the hand-written modes
    case: Case
    cohort_records: list[ProbeRecord]
    reference_records: list[ProbeRecord]
    reason: str


def corrupted(rec: ProbeRecord) -> bool:
    return (rec.judgement or {}).get("verdict") == "corrupted" or crashed(rec)


def crashed(rec: ProbeRecord) -> bool:
    """The engine failed this request (HTTP 5xx or a dead engine mid-stream), not a refused parameter or a
    connection to a server that was already down."""
    err = rec.infra_error or ""
    return bool(err) and "ConnectError" not in err and ("500" in err or "EngineCore" in err or "Internal" in err)


def group_of(rec: ProbeRecord) -> str:
    return f"{rec.mode}-{rec.index:03d}"


def failing_groups(cohort_dir: Path) -> dict[str, list[ProbeRecord]]:
    """Probe groups (a fuzz case, or one probe of a mode) with at least one request judged corrupted."""
    groups: dict[str, list[ProbeRecord]] = defaultdict(list)
    for rec in read_records(cohort_dir).values():
        groups[group_of(rec)].append(rec)
    return {g: sorted(rs, key=lambda r: r.role) for g, rs in sorted(groups.items()) if any(corrupted(r) for r in rs)}


def request_of(rec: ProbeRecord, first: str | None) -> TimedRequest:
    x = rec.extra
    params = dict(rec.params or {})
    params.setdefault("max_tokens", len(rec.output_token_ids or []) or 32)
    params.setdefault("temperature", 0.0)
    params.setdefault("ignore_eos", True)
    if rec.output_top_logprobs:
        params.setdefault("logprobs", max((len(t) for t in rec.output_top_logprobs), default=5) or 5)
    streamed = rec.role in STREAMED_FIRST
    return TimedRequest(
        role=str(x.get("request") or rec.role),
        endpoint="chat" if x.get("endpoint") == "chat" or rec.mode == "tool_aba" else "completions",
        prompt_token_ids=list(rec.prompt_token_ids or []),
        messages=x.get("messages"),
        params=params,
        start_ms=int(x.get("start_ms") or 0),
        after=x.get("after") if rec.mode == "fuzz" else (None if streamed or first is None else first),
        stream=bool(x.get("stream", True)) if rec.mode == "fuzz" else streamed,
        abort_after_tokens=x.get("abort_after_tokens"),
        features=list(x.get("features") or [rec.mode]),
        banned_sequences=list(x.get("banned_sequences") or []),
        reasoning_end_ids=list(x.get("reasoning_end_ids") or []),
        until_others_done=bool(x.get("until_others_done")),
    )


def case_of(records: list[ProbeRecord]) -> Case:
    """The case that produced these records (one request per record; n > 1 choices fold into their request)."""
    first = next((r.role for r in records if r.role in STREAMED_FIRST), None)
    seen: dict[str, TimedRequest] = {}
    for rec in records:
        req = request_of(rec, first)
        seen.setdefault(req.role, req)
    index = records[0].index
    return Case(seed=-1, index=index, requests=sorted(seen.values(), key=lambda r: (r.role != "w", r.role)))


def find(run_path: Path, cohort: str, group: str | None = None) -> Evidence:
    """The first (or the named) failing group of `cohort`, with its reference's records."""
    groups = failing_groups(run_path / cohort)
    if not groups:
        raise LookupError(f"{cohort}: no probe judged corrupted under {run_path / cohort / 'probes'}")
    name = group if group is not None else _smallest(groups)
    if name not in groups:
        raise LookupError(f"{cohort}: {name} did not fail (failing: {', '.join(groups)})")
    recs = groups[name]
    reference = next((r.reference_cohort for r in recs if r.reference_cohort), None) or _run_reference(run_path, cohort)
    refs = read_records(run_path / str(reference))
    ref_recs = [refs[r.probe_id] for r in recs if r.probe_id in refs]
    reason = next((str((r.judgement or {}).get("reason")) for r in recs if corrupted(r) and not crashed(r)), "")
    if not reason:
        reason = "the engine failed: " + next(str(r.infra_error) for r in recs if crashed(r))[:300]
    return Evidence(cohort, str(reference), name, case_of(recs), recs, ref_recs, reason)


def _run_reference(run_path: Path, cohort: str) -> str:
    """The run's canary reference (records of a crashed request were never compared, so they name none)."""
    import json

    meta = json.loads((run_path / "run.json").read_text(encoding="utf-8")) if (run_path / "run.json").is_file() else {}
    canary = ((meta.get("spec") or {}).get("workloads") or {}).get("canary") or {}
    if canary.get("reference") and canary["reference"] != cohort:
        return str(canary["reference"])
    raise LookupError(f"{cohort}: its failing records name no reference cohort and run.json names none")


def _smallest(groups: dict[str, list[ProbeRecord]]) -> str:
    """Prefer the failing group with the fewest requests (the cheapest to shrink and to read)."""
    return min(groups, key=lambda g: (len(groups[g]), g))


def outputs(records: list[ProbeRecord]) -> dict[str, dict[str, Any]]:
    """role -> the recorded output (token ids, chosen logprobs, top logprobs, finish reason)."""
    out: dict[str, dict[str, Any]] = {}
    for r in records:
        if "~" in r.role:
            continue
        role = str(r.extra.get("request") or r.role)
        out[role] = {
            "ids": list(r.output_token_ids or []),
            "logprobs": list(r.output_token_logprobs or []),
            "top": list(r.output_top_logprobs or []),
            "finish_reason": r.finish_reason,
            "error": r.infra_error,
            "refused": r.extra.get("refused"),
            "aborted": bool(r.extra.get("aborted")),
        }
    return out
