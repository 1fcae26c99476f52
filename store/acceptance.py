"""Speculative acceptance from `metrics.jsonl` snapshots: the one restart-safe computation.

vLLM's speculative counters are Prometheus counters: they only grow while a server lives and start from zero when
it restarts (a watchdog restart, a crashed worker brought back). Acceptance over a workload is therefore the
*growth* of the counters across its time-ordered snapshots, where a drop means "restarted, count the new value
from zero". The canary's gate, the acceptance monitor, the report and the GPU node script all use this module, so
that they never disagree on the number users look at first.

    records = [r for r in read_jsonl(cohort_dir / "metrics.jsonl") if r.get("workload") == "canary"]
    a = acceptance(records)          # None: the server exports no speculative counters
    a.rate, a.per_position_rate      # None / () when nothing was drafted

A restart is seen on the whole record: when any monotone counter of a snapshot (speculative, token or prefix-cache
counters) is below its last value, every counter of that snapshot counts from zero, even one that happens to be
higher than before. Snapshots whose scrape failed for some server (`errors`) hold partial sums and are skipped.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from numbers import Real
from typing import Any

DRAFTS = "spec_decode_num_drafts"
DRAFT_TOKENS = "spec_decode_num_draft_tokens"
ACCEPTED_TOKENS = "spec_decode_num_accepted_tokens"
PER_POSITION = "spec_decode_accepted_per_pos"
SPECULATIVE = (DRAFTS, DRAFT_TOKENS, ACCEPTED_TOKENS)
# Other monotone counters of metrics.jsonl: they only help to see a restart (gauges such as
# num_requests_running may fall at any time and are left out).
_ALSO_MONOTONE = ("generation_tokens", "prompt_tokens", "prefix_cache_queries", "prefix_cache_hits")


@dataclass(frozen=True)
class Acceptance:
    """Growth of the speculative counters over a span of snapshots."""

    drafts: int  # vllm:spec_decode_num_drafts_total growth
    draft_tokens: int  # vllm:spec_decode_num_draft_tokens_total growth
    accepted_tokens: int  # vllm:spec_decode_num_accepted_tokens_total growth
    per_position: tuple[int, ...] = ()  # accepted tokens per draft position (..._per_pos_total growth)

    @property
    def rate(self) -> float | None:
        """Accepted / drafted tokens; None when nothing was drafted."""
        return self.accepted_tokens / self.draft_tokens if self.draft_tokens > 0 else None

    @property
    def per_position_rate(self) -> tuple[float, ...]:
        """Accepted tokens at draft position i per draft; () when nothing was drafted."""
        if self.drafts <= 0:
            return ()
        return tuple(n / self.drafts for n in self.per_position)

    @property
    def mean_acceptance_length(self) -> float | None:
        """Tokens a draft step yields on average: 1 (the verified token) + accepted per draft; None without drafts."""
        return 1 + self.accepted_tokens / self.drafts if self.drafts > 0 else None

    def as_dict(self) -> dict[str, Any]:
        """The counts and the derived rates, for a JSON record."""
        return {
            "drafts": self.drafts,
            "draft_tokens": self.draft_tokens,
            "accepted_tokens": self.accepted_tokens,
            "per_position": list(self.per_position),
            "rate": self.rate,
            "per_position_rate": list(self.per_position_rate),
            "mean_acceptance_length": self.mean_acceptance_length,
        }


def counter_growth(values: Sequence[float | None]) -> float:
    """Growth of a monotone counter over time-ordered samples; a drop means the server restarted, and the
    post-restart value counts from zero. None samples are skipped.

    The first sample is the baseline (taken before the workload), so fewer than two samples grow by 0.
    """
    seen = [float(v) for v in values if v is not None]
    return sum((_step(before, after, restarted=after < before) for before, after in pairwise(seen)), 0.0)


def acceptance(records: Sequence[Mapping[str, Any]]) -> Acceptance | None:
    """From metrics.jsonl records (fields as eval/stacks/metrics.py COUNTERS: spec_decode_num_drafts,
    spec_decode_num_draft_tokens, spec_decode_num_accepted_tokens, spec_decode_accepted_per_pos), in time
    order. None when no record has speculative counters."""
    steps = _steps(records)
    if steps is None:
        return None
    return _total(step for _, step in steps)


def windows(records: Sequence[Mapping[str, Any]], width_s: float) -> list[tuple[float, float, Acceptance]]:
    """(t_start, t_end, acceptance) per time window of width_s, restart-safe across windows.

    Windows are [t0 + k*width_s, t0 + (k+1)*width_s) from the first snapshot's `t` to the last one's. A window
    counts the growth from the snapshot before it to its own snapshots, so the windows add up to `acceptance` of
    all records. A window without snapshots is listed with zero counts (rate None). Records without `t` are
    skipped; [] when no record has speculative counters.
    """
    if width_s <= 0:
        raise ValueError(f"width_s must be positive, got {width_s}")
    timed = [r for r in records if _number(r.get("t")) is not None]
    steps = _steps(timed)
    if not steps:
        return []
    t0 = float(timed[0]["t"])
    count = int((float(timed[-1]["t"]) - t0) // width_s) + 1
    buckets: list[list[Acceptance]] = [[] for _ in range(count)]
    for index, step in steps:
        buckets[int((float(timed[index]["t"]) - t0) // width_s)].append(step)
    return [(t0 + k * width_s, t0 + (k + 1) * width_s, _total(b)) for k, b in enumerate(buckets)]


def _step(before: float, after: float, restarted: bool) -> float:
    return after if restarted else after - before


def _number(value: Any) -> float | None:
    """A counter's value (also a numpy number, as a DataFrame row holds it); None for null, NaN and non-numbers."""
    if isinstance(value, bool) or not isinstance(value, Real) or math.isnan(value):
        return None
    return float(value)


def _counters(record: Mapping[str, Any]) -> dict[str, float]:
    """The record's counters as name -> value (per-position ones as `spec_decode_accepted_per_pos[i]`)."""
    out = {k: v for k in (*SPECULATIVE, *_ALSO_MONOTONE) if (v := _number(record.get(k))) is not None}
    per_pos = record.get(PER_POSITION)
    if isinstance(per_pos, list | tuple):
        for i, value in enumerate(per_pos):
            if (v := _number(value)) is not None:
                out[f"{PER_POSITION}[{i}]"] = v
    return out


def _is_speculative(name: str) -> bool:
    return name in SPECULATIVE or name.startswith(PER_POSITION)


def _steps(records: Sequence[Mapping[str, Any]]) -> list[tuple[int, Acceptance]] | None:
    """(record index, growth since the last usable snapshot) per usable snapshot; None without speculative counters.

    The first usable snapshot is the baseline and grows by zero.
    """
    last: dict[str, float] = {}  # counter -> its last value
    steps: list[tuple[int, Acceptance]] = []
    speculative = False
    for index, record in enumerate(records):
        if isinstance(record.get("errors"), list | tuple) and record["errors"]:
            continue  # some server did not answer: the sums are partial
        now = _counters(record)
        if not now:
            continue
        speculative = speculative or any(_is_speculative(k) for k in now)
        restarted = any(v < last[k] for k, v in now.items() if k in last)
        grown = {k: _step(last[k], v, restarted) for k, v in now.items() if k in last}
        if restarted:  # a counter the last snapshot lacked also starts from zero
            grown.update({k: v for k, v in now.items() if k not in last})
        last.update(now)
        if restarted:  # counters this snapshot lacks restarted too: their next value counts from zero
            last = {k: (v if k in now else 0.0) for k, v in last.items()}
        steps.append((index, _acceptance_of(grown)))
    return steps if speculative else None


def _acceptance_of(grown: Mapping[str, float]) -> Acceptance:
    positions = sorted(int(k[len(PER_POSITION) + 1 : -1]) for k in grown if k.startswith(PER_POSITION + "["))
    per_position = [0] * (positions[-1] + 1 if positions else 0)
    for i in positions:
        per_position[i] = round(grown[f"{PER_POSITION}[{i}]"])
    return Acceptance(
        drafts=round(grown.get(DRAFTS, 0.0)),
        draft_tokens=round(grown.get(DRAFT_TOKENS, 0.0)),
        accepted_tokens=round(grown.get(ACCEPTED_TOKENS, 0.0)),
        per_position=tuple(per_position),
    )


def _total(parts: Iterable[Acceptance]) -> Acceptance:
    drafts = draft_tokens = accepted = 0
    per_position: list[int] = []
    for a in parts:
        drafts += a.drafts
        draft_tokens += a.draft_tokens
        accepted += a.accepted_tokens
        per_position.extend([0] * (len(a.per_position) - len(per_position)))
        for i, n in enumerate(a.per_position):
            per_position[i] += n
    return Acceptance(drafts, draft_tokens, accepted, tuple(per_position))
