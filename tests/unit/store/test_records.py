"""store.records and store.layout: what the pipeline writes is the typed record the readers expect."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from eval.pipeline import write_cohorts
from eval.rollout.stopper import write_order
from eval.spec import load_spec
from eval.stacks.metrics import summarize
from eval.store.run import open_run
from store.layout import RunLayout
from store.order import ordered
from store.records import CohortRecord, InstanceOrder, MetricsSnapshot, RunRecord


def test_run_and_cohort_json_are_typed_records(write_spec, tmp_path: Path) -> None:
    loaded = load_spec([str(write_spec())])
    run = open_run(loaded, tmp_path, "r1")
    run.mark(stage="canary")  # stages add their own fields: a reader keeps them
    meta = RunRecord.model_validate_json(run.run_json.read_text())
    assert meta.spec_hash == loaded.output_hash and meta.model_extra == {"stage": "canary"}
    write_cohorts(loaded, run, "/models/m")
    layout = RunLayout(run.path)
    for cohort in loaded.cohorts:
        record = CohortRecord.model_validate_json(layout.cohort_json(cohort.name).read_text())
        assert record.name == cohort.name and record.commands
    with pytest.raises(ValidationError):
        CohortRecord.model_validate({**record.model_dump(), "typo": 1})


def test_instances_json_and_a_metrics_line_round_trip(tmp_path: Path) -> None:
    ids = write_order(tmp_path, ["b__2", "a__1", "c__3"])
    order = InstanceOrder.model_validate_json((RunLayout(tmp_path).instances_json).read_text())
    assert order.instances == ids == ordered(ids)
    snap = MetricsSnapshot(t=1.0, phase="before", workload="canary", **summarize([]))
    line = json.loads(json.dumps(snap.record()))
    assert "errors" not in line and line["spec_decode_num_drafts"] is None and line["schema_version"] == 1
    failed = MetricsSnapshot(t=2.0, phase="after", workload="canary", errors=["http://x/metrics: refused"])
    assert failed.record()["errors"] == ["http://x/metrics: refused"]
    counted = MetricsSnapshot(t=3.0, phase="periodic", workload="canary", spec_decode_num_drafts=12)
    assert json.dumps(counted.record()["spec_decode_num_drafts"]) == "12"  # a counter stays an integer
