"""The acceptance monitor: per-window and per-position draft acceptance from a cohort's metrics.jsonl, and the
change detector over it.

Acceptance comes from `store.acceptance.windows` (the one restart-safe computation: a counter that drops means a
restarted server and counts from zero), so the monitor, the canary, the report and the GPU node script agree.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

from eval.spec.workloads import SoakWorkload
from eval.uptime.detector import Detection, Window, detect, pool
from store.acceptance import windows as acceptance_windows
from store.atomic import read_jsonl


@dataclass(frozen=True)
class MonitorResult:
    """Windows as measured (with per-position rates) and the detector's view of the pooled ones."""

    windows: list[dict[str, Any]]
    detection: Detection
    restarts: int

    def to_json(self) -> dict[str, Any]:
        d = self.detection
        alarm = None
        if d.alarm_at is not None:
            w = d.windows[d.alarm_at]
            alarm = {"window": d.alarm_at, "t_start": w.t_start, "t_end": w.t_end, "rate": w.rate}
        return {
            "windows": self.windows,
            "restarts": self.restarts,
            "detector": {
                "kind": "betting e-detector (CUSUM form), mixture of bets",
                "threshold": d.threshold,
                "baseline": d.baseline,
                "floor": d.floor,
                "tested_windows": d.tested,
                "pooled_windows": [[w.t_start, w.t_end, w.accepted, w.draft_tokens] for w in d.windows],
                "e_values": list(d.e_values),
                "max_e_value": d.max_e_value,
                "alarm": alarm,
            },
        }


def read_metrics(path: Path, workload: str | None = None) -> list[dict[str, Any]]:
    """metrics.jsonl records in file order (time order), only `workload`'s when given; bad lines skipped."""
    return [rec for rec in read_jsonl(path) if workload is None or rec.get("workload") == workload]


def restarts(records: Sequence[Mapping[str, Any]]) -> int:
    """Snapshots whose generated-token counter fell below the previous one: the server restarted."""
    seen = [float(v) for r in records if isinstance(v := r.get("generation_tokens"), int | float)]
    return sum(1 for a, b in pairwise(seen) if b < a)


def monitor(records: Sequence[Mapping[str, Any]], cfg: SoakWorkload) -> MonitorResult:
    """Per-window acceptance of `records` (time-ordered metrics.jsonl lines) and the change detector over it."""
    raw = acceptance_windows(records, cfg.window_s)
    rows = [
        {
            "t_start": t0,
            "t_end": t1,
            "drafts": a.drafts,
            "draft_tokens": a.draft_tokens,
            "accepted_tokens": a.accepted_tokens,
            "rate": a.rate,
            "per_position_rate": list(a.per_position_rate),
        }
        for t0, t1, a in raw
    ]
    measured = [Window(t0, t1, a.accepted_tokens, a.draft_tokens) for t0, t1, a in raw]
    pooled = pool(measured, cfg.min_window_draft_tokens)
    detection = detect(pooled, cfg.baseline_windows, cfg.max_relative_drop, cfg.alpha)
    return MonitorResult(windows=rows, detection=detection, restarts=restarts(records))
