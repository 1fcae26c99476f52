"""An early-stopped cohort counts the instances its decision was made on, not the units in flight then (issue 31:
the demo's reverted MTP 5 row read 0/13 on one machine and 0/17 on another for the same decision at instance 9)."""

from __future__ import annotations

from pathlib import Path

from analysis.load import load_run
from analysis.qualify import analyze
from analysis.summary import planned_order
from store.record_io import write_record
from store.unit_records import EarlyStopRecord
from tests.fixtures.synth_results import MOTIVATING, make_run
from tests.unit.analysis.conftest import scaled


def test_units_finished_after_the_decision_are_not_counted(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path / "run", instances=40, repeats=3, resolved_counts=scaled(40), seed=7)
    cohort = next(c for c in MOTIVATING if c.control)
    before = analyze(load_run(run_dir)).summaries[cohort.name]
    assert before.units == 120 and before.after_stop_units == 0
    stop = EarlyStopRecord(cohort=cohort.name, control=cohort.control, decision="FAIL", decided_at=12, planned=40,
                           lower=0.05, upper=0.3, margin=0.03, alpha=0.05, stopped_at="2026-12-05T00:00:00+00:00",
                           units_finished_when_asked=50, reason="FAIL decided at instance 12 of 40")  # fmt: skip
    write_record(run_dir / cohort.name / "early_stop.json", stop)
    after = analyze(load_run(run_dir))
    s = after.summaries[cohort.name]
    assert s.units == 36 and s.after_stop_units == 84
    order = planned_order(load_run(run_dir))[:12]
    units = load_run(run_dir).units
    mine = units[(units["cohort"] == cohort.name) & units["instance_id"].isin(order)]
    assert s.resolved == int((mine["outcome"] == "resolved").sum())
    assert "84 units that finished after the decision are not counted" in (s.reason or "")
    assert after.comparisons[cohort.name].instances <= 12  # the paired test sees the same instances
    control = after.summaries[cohort.control or ""]
    assert control.units == 120  # the control was not stopped: all of it counts
