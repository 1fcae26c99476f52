"""The uptime verdict of one cohort: what the phases and the acceptance monitor say together, with reasons.

| phases (vs reference or own fresh phase) | acceptance alarm | verdict |
|---|---|---|
| fresh corrupted | any | `corrupted-at-start` (a plain canary sees it: not an uptime bug) |
| fresh clean, a later phase corrupted | no | `uptime-corruption` |
| fresh clean, a later phase corrupted | yes | `uptime-corruption` (the collapse is named as evidence) |
| all clean | yes | `performance-bug` (acceptance collapsed, outputs equal the reference) |
| all clean, but no prefix hit, (almost) no accepted draft, or no tested window | no | `not-exercised` |
| all clean | no | `clean` |
| probes unanswered | any | `failed` |
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from eval.uptime.monitor import MonitorResult
from eval.uptime.phases import FRESH, PhaseSummary

VERDICTS = ("clean", "uptime-corruption", "corrupted-at-start", "performance-bug", "not-exercised", "failed")
MIN_BASELINE = 0.05  # below this acceptance, the state that accepted drafts leave behind is not exercised


@dataclass
class UptimeVerdict:
    verdict: str
    reasons: list[str] = field(default_factory=list)
    first_divergence: dict[str, Any] | None = None  # the fact: the earliest phase with corrupted probes

    def to_json(self) -> dict[str, Any]:
        return {"verdict": self.verdict, "reasons": self.reasons, "first_divergence": self.first_divergence}


def _corrupted(p: PhaseSummary) -> int:
    return max(p.vs_reference.corrupted if p.vs_reference else 0, p.vs_fresh.corrupted if p.vs_fresh else 0)


def _fact(p: PhaseSummary) -> dict[str, Any]:
    load = f"{p.soak_finished} soak requests" if p.soak_finished >= 0 else "the load (rollouts)"
    when = "on a fresh server" if p.phase == FRESH else f"after {load} ({p.phase} phase)"
    if p.phase != FRESH and p.warm_uncached:
        when += f", after eviction ({p.warm_uncached}/{p.probes} probe prefixes had been evicted)"
    sides = [(n, s) for n, s in (("reference", p.vs_reference), ("own fresh phase", p.vs_fresh)) if s is not None]
    detail = "; ".join(
        f"{s.corrupted}/{s.compared} probes corrupted vs the {n}"
        + (f" (first wrong token at {sorted(s.first_divergence)})" if s.first_divergence else "")
        for n, s in sides
    )
    return {"phase": p.phase, "soak_finished": p.soak_finished, "evicted": p.warm_uncached, "text": f"{when}: {detail}"}


def _collapse(monitor: MonitorResult | None) -> str | None:
    if monitor is None or not monitor.detection.alarmed:
        return None
    d = monitor.detection
    assert d.alarm_at is not None and d.baseline is not None
    w = d.windows[d.alarm_at]
    rate = f"{w.rate:.1%}" if w.rate is not None else "n/a"
    return (
        f"acceptance collapsed: e-value {d.e_values[d.alarm_at - (len(d.windows) - d.tested)]:.0f} >= "
        f"{d.threshold:.0f} in the window ending {w.t_end - d.windows[0].t_start:.0f} s into the soak "
        f"(rate {rate}, baseline {d.baseline:.1%}, null floor {d.floor:.1%})"
    )


def decide(phases: list[PhaseSummary], monitor: MonitorResult | None) -> UptimeVerdict:
    """The cohort's uptime verdict from its phases (fresh first) and its acceptance monitor."""
    fresh = next((p for p in phases if p.phase == FRESH), None)
    collapse = _collapse(monitor)
    if fresh is None or fresh.answered < fresh.probes or any(p.answered < p.probes for p in phases):
        missing = sum(p.probes - p.answered for p in phases)
        return UptimeVerdict("failed", [f"{missing} phase probes got no answer (server error or no fresh phase)"])
    first = next((p for p in phases if _corrupted(p)), None)
    reasons = [f"{p.phase}: {_fact(p)['text']}" for p in phases if _corrupted(p)]
    if collapse:
        reasons.append(collapse)
    if first is not None and first.phase == FRESH:
        return UptimeVerdict("corrupted-at-start", reasons, _fact(first))
    if first is not None:
        reasons.insert(0, "corruption that grows with uptime: the fresh phase is clean, a later phase is not")
        return UptimeVerdict("uptime-corruption", reasons, _fact(first))
    if collapse:
        reasons.insert(0, "performance bug: acceptance collapsed while every phase's outputs equal the reference")
        return UptimeVerdict("performance-bug", reasons)
    unexercised = _not_exercised(phases, monitor)
    if unexercised:
        return UptimeVerdict("not-exercised", unexercised)
    tested = monitor.detection.tested if monitor is not None else 0
    return UptimeVerdict(
        "clean",
        [f"0 corrupted probes in {len(phases)} phases; no acceptance alarm over {tested} tested windows"],
    )


def _not_exercised(phases: list[PhaseSummary], monitor: MonitorResult | None) -> list[str]:
    """Why a clean-looking soak saw nothing: no probe started from a cached prefix, or drafts were (almost) never
    accepted. Empty when the soak exercised both."""
    out = []
    if not any(p.prefix_hits for p in phases):
        out.append(
            "no probe was served from a cached prefix (is the prompt shorter than two KV blocks? vLLM raises the "
            "attention block of a Mamba hybrid whose SSM cache is wider than the KV dtype, e.g. float32 state at "
            "bfloat16: 'Setting attention block size' in the server log; set server.args.mamba_ssm_cache_dtype)"
        )
    if monitor is None:
        return out
    d = monitor.detection
    drafted = sum(int(w.get("draft_tokens") or 0) for w in monitor.windows)
    accepted = sum(int(w.get("accepted_tokens") or 0) for w in monitor.windows)
    if drafted == 0:
        out.append("no draft tokens in /metrics: speculation was off or never ran")
    elif accepted / drafted < MIN_BASELINE:
        out.append(
            f"drafts were almost never accepted ({accepted}/{drafted} draft tokens, {accepted / drafted:.1%}): "
            "state left by accepted drafts was not exercised"
        )
    elif d.baseline is None or d.tested == 0:
        # Drafts were accepted, but the soak was too short for the monitor: all its windows went to the baseline.
        out.append(
            f"the acceptance monitor tested no window ({len(d.windows)} pooled windows, all taken by the baseline; "
            f"{accepted}/{drafted} draft tokens accepted): make the soak longer (requests, duration_s)"
        )
    return out
