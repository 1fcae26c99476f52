"""Prometheus `/metrics` snapshots of a stack, appended to `<run>/<cohort>/metrics.jsonl`.

Each line sums the counters over the stack's vLLM processes (P/D: every worker) and over label sets (engines,
models). Names and schema: results/README.md, "metrics.jsonl". A counter no server exports is null (e.g. the
speculative counters of a server without speculation). Generation throughput is the difference of
`generation_tokens` over the difference of `t` between two snapshots.

    with MetricsRecorder(stack.metrics_urls, run_dir / cohort / "metrics.jsonl").around("canary", every_s=10):
        run_the_workload()
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from store.atomic import append_line
from store.records import MetricsSnapshot

SCHEMA_VERSION = 1
__all__ = ["COUNTERS", "PER_POS", "MetricsRecorder", "append_line", "parse", "summarize"]
_LINE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)")
_LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')
# field of metrics.jsonl -> Prometheus sample name exported by vLLM
COUNTERS = {
    "spec_decode_num_drafts": "vllm:spec_decode_num_drafts_total",
    "spec_decode_num_draft_tokens": "vllm:spec_decode_num_draft_tokens_total",
    "spec_decode_num_accepted_tokens": "vllm:spec_decode_num_accepted_tokens_total",
    "prefix_cache_queries": "vllm:prefix_cache_queries_total",
    "prefix_cache_hits": "vllm:prefix_cache_hits_total",
    "num_requests_running": "vllm:num_requests_running",
    "num_requests_waiting": "vllm:num_requests_waiting",
    "generation_tokens": "vllm:generation_tokens_total",
    "prompt_tokens": "vllm:prompt_tokens_total",
}
PER_POS = "vllm:spec_decode_num_accepted_tokens_per_pos_total"

Sample = tuple[str, dict[str, str], float]


def parse(text: str) -> list[Sample]:
    """Samples of a Prometheus text exposition: (name, labels, value); comments and junk lines are skipped."""
    out: list[Sample] = []
    for line in text.splitlines():
        m = _LINE.match(line)
        if not m:
            continue
        try:
            value = float(m.group(3))
        except ValueError:
            continue
        labels = dict(_LABEL.findall(m.group(2) or ""))
        out.append((m.group(1), labels, value))
    return out


def _num(v: float) -> int | float:
    return int(v) if v.is_integer() else v


def summarize(texts: list[str]) -> dict[str, Any]:
    """The metrics.jsonl counters, summed over servers and label sets (null where no server exports one)."""
    sums: dict[str, float] = {}
    per_pos: dict[int, float] = {}
    for text in texts:
        for name, labels, value in parse(text):
            if name == PER_POS and "position" in labels:
                pos = int(labels["position"])
                per_pos[pos] = per_pos.get(pos, 0.0) + value
            else:
                sums[name] = sums.get(name, 0.0) + value
    record: dict[str, Any] = {k: (_num(sums[n]) if n in sums else None) for k, n in COUNTERS.items()}
    record["spec_decode_accepted_per_pos"] = [_num(per_pos[i]) for i in sorted(per_pos)] if per_pos else None
    return record


class MetricsRecorder:
    """Scrapes a stack's /metrics URLs into one metrics.jsonl (before/after a workload, and periodically)."""

    def __init__(self, urls: list[str], path: Path | None, timeout_s: float = 10.0) -> None:
        self.urls = list(urls)
        self.path = path
        self.timeout_s = timeout_s
        self.records: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def snapshot(self, phase: str, workload: str) -> dict[str, Any]:
        texts = []
        errors = []
        with httpx.Client(timeout=self.timeout_s) as client:
            for url in self.urls:
                try:
                    r = client.get(url)
                    r.raise_for_status()
                    texts.append(r.text)
                except httpx.HTTPError as e:
                    errors.append(f"{url}: {e}")
        snap = MetricsSnapshot(t=time.time(), phase=phase, workload=workload, errors=errors or None, **summarize(texts))
        record = snap.record()
        with self._lock:
            self.records.append(record)
            if self.path is not None:
                append_line(self.path, record)
        return record

    @contextmanager
    def around(self, workload: str, every_s: float | None = None) -> Iterator[MetricsRecorder]:
        """`before` on entry, `periodic` every `every_s` seconds in between, `after` on exit."""
        self.snapshot("before", workload)
        stop = threading.Event()
        thread = None
        if every_s:
            thread = threading.Thread(target=self._periodic, args=(workload, every_s, stop), daemon=True)
            thread.start()
        try:
            yield self
        finally:
            stop.set()
            if thread is not None:
                thread.join()
            self.snapshot("after", workload)

    def _periodic(self, workload: str, every_s: float, stop: threading.Event) -> None:
        while not stop.wait(every_s):
            self.snapshot("periodic", workload)
