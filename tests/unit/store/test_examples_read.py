"""Every typed record reads the committed results/examples/ directories (files written by older writers)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import BaseModel

from store.cache_records import BundleManifest
from store.canary_records import CanarySummary, ProbeResult, UptimeSummary
from store.gpu_records import GpuPlacement, Handshakes, NixlManifest, NodeTimings, SideChannels, SmokeReply
from store.record_io import parse_record
from store.records import CohortRecord, InstanceOrder, MetricsSnapshot, RunRecord
from store.report_records import ReportSummary
from store.stack_records import ServerEvent, StackRecord
from store.unit_records import EarlyStopRecord, GradeRecord, LabelsRecord, TrajectoryLine, VerdictRecord

EXAMPLES = Path(__file__).resolve().parents[3] / "results" / "examples"
KINDS: dict[str, type[BaseModel]] = {
    "run.json": RunRecord,
    "cohort.json": CohortRecord,
    "instances.json": InstanceOrder,
    "metrics.jsonl": MetricsSnapshot,
    "verdict.json": VerdictRecord,
    "grade.json": GradeRecord,
    "labels.json": LabelsRecord,
    "trajectory.jsonl": TrajectoryLine,
    "early_stop.json": EarlyStopRecord,
    "stack*.json": StackRecord,
    "server_events.jsonl": ServerEvent,
    "summary.json": ReportSummary,
    "bundle.json": BundleManifest,
    "placement.json": GpuPlacement,
    "side-channels.json": SideChannels,
    "handshakes.json": Handshakes,
    "smoke.json": SmokeReply,
    "nixl.json": NixlManifest,
    "timings.json": NodeTimings,
    "probes/*.json": ProbeResult,
    "canary.json": CanarySummary,
}


def records(path: Path) -> list[object]:
    text = path.read_text(encoding="utf-8")
    return [json.loads(x) for x in text.splitlines() if x.strip()] if path.suffix == ".jsonl" else [json.loads(text)]


@pytest.mark.parametrize("name", sorted(KINDS))
def test_every_committed_example_reads_as_its_record(name: str) -> None:
    files = sorted(EXAMPLES.rglob(name))
    assert files, f"no {name} under {EXAMPLES}"
    bad = [f"{p.relative_to(EXAMPLES)}" for p in files for rec in records(p) if parse_record(rec, KINDS[name]) is None]
    assert not bad, f"{len(bad)} {name} records do not read: {bad[:3]}"


def test_committed_soaks_read_as_uptime_summaries() -> None:
    files = sorted((EXAMPLES.parents[1] / "benchmarks" / "uptime" / "runs").rglob("uptime.json"))
    assert files
    bad = [str(p) for p in files if parse_record(records(p)[0], UptimeSummary) is None]
    assert not bad, bad
