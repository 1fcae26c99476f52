"""Loaders: fixed grains, declared columns, infra failures kept apart, torn lines and missing files tolerated."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from analysis import columns
from analysis.load import NotARunError, load_run
from tests.fixtures.synth_results import make_run
from tests.unit.analysis.conftest import scaled


def test_units_grain_and_columns(small_run: Path) -> None:
    run = load_run(small_run)
    units = run.units
    assert len(units) == 4 * 60 * 3
    assert list(units.columns) == ["cohort", *columns.names(columns.UNITS)]
    assert not units.duplicated(["cohort", "instance_id", "repeat"]).any()
    assert run.cohort_names == ["unpatched-off", "unpatched-mtp5", "patched-off", "patched-mtp5"]


def test_infra_failures_are_not_unresolved(small_run: Path) -> None:
    units = load_run(small_run).units
    infra = units[units["outcome"] == "infra"]
    assert len(infra) == 5 and set(infra["cohort"]) == {"patched-off"}
    assert infra["resolved"].isna().all()
    assert (infra["rollout_status"] == "infra_error").all()


def test_turns_carry_labels_and_evidence(small_run: Path) -> None:
    turns = load_run(small_run).turns
    assert {"turn", "labels", "evidence", "completion_tokens"} <= set(turns.columns)
    labelled = turns[turns["labels"].map(len) > 0]
    assert set(labelled["cohort"]) == {"unpatched-mtp5"}
    assert all(ev and ev[0]["text"] for ev in labelled["evidence"])
    assert turns["completion_tokens"].eq(400).all()


def test_probes_and_metrics(small_run: Path) -> None:
    run = load_run(small_run)
    probes = run.probes
    assert len(probes) == 4 * 32
    mtp = probes[probes["cohort"] == "unpatched-mtp5"]
    assert int(mtp["diverged"].astype(bool).sum()) == 16
    assert run.metrics["spec_decode_num_draft_tokens"].notna().sum() == 4  # two MTP cohorts x before/after


def tiny(path: Path) -> Path:
    return make_run(path, instances=5, resolved_counts=scaled(5), seed=1)


def test_cohort_frame_has_provenance_and_says_when_it_is_missing(tmp_path: Path) -> None:
    copy = tiny(tmp_path / "run")
    (copy / "patched-off" / "stack.json").unlink()
    cohorts = load_run(copy).cohorts.set_index("cohort")
    assert cohorts.loc["unpatched-mtp5", "vllm_version"] == "0.32.0"
    assert cohorts.loc["unpatched-mtp5", "patches"][0]["reverse"] is True
    assert pd.isna(cohorts.loc["patched-off", "vllm_version"])


def test_torn_trajectory_line_is_skipped(tmp_path: Path) -> None:
    copy = tiny(tmp_path / "run")
    unit = next((copy / "patched-mtp5" / "units").glob("*/r0"))
    traj = unit / "trajectory.jsonl"
    good = len(traj.read_text().splitlines())
    traj.write_text(traj.read_text() + '{"turn": 99, "content": "half')
    run = load_run(copy)
    rows = run.unit_turns("patched-mtp5", unit)
    assert len(rows) == good


def test_not_a_run_directory(tmp_path: Path) -> None:
    with pytest.raises(NotARunError, match=r"no readable run\.json"):
        load_run(tmp_path)
    (tmp_path / "run.json").write_text(json.dumps([1, 2]))
    with pytest.raises(NotARunError):
        load_run(tmp_path)


def test_a_grading_infra_error_is_infra_too(tmp_path: Path) -> None:
    run_dir = tiny(tmp_path / "run")
    unit = next((run_dir / "patched-mtp5" / "units").glob("*/r1"))
    grade = json.loads((unit / "grade.json").read_text())
    grade.update(status="infra_error", resolved=None, infra_reason="harness timeout")
    (unit / "grade.json").write_text(json.dumps(grade))
    units = load_run(run_dir).units
    row = units[units["unit_dir"] == str(unit.relative_to(run_dir))].iloc[0]
    assert row["rollout_status"] == "completed"
    assert (row["outcome"], row["infra"], row["grade_infra_reason"]) == ("infra", True, "harness timeout")
