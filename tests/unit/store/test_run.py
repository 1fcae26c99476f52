"""Run directories: run.json, resume with the same hash, refusal with a different one."""

from __future__ import annotations

from pathlib import Path

import pytest

from eval.spec import SpecError, load_spec
from eval.store.atomic import atomic_write_json
from eval.store.run import SCHEMA_VERSION, open_run


def test_new_run_writes_run_json(write_spec, tmp_path: Path) -> None:
    loaded = load_spec([str(write_spec())])
    run = open_run(loaded, tmp_path / "results", "r1")
    meta = run.meta()
    assert meta["schema_version"] == SCHEMA_VERSION
    assert meta["spec_hash"] == loaded.output_hash
    assert meta["cohorts"] == [c.name for c in loaded.cohorts]
    assert meta["spec"]["model"]["path"] == "/models/m"
    assert meta["ended_at"] is None and meta["started_at"]


def test_resume_same_spec_and_refuse_different(write_spec, tmp_path: Path) -> None:
    path = str(write_spec())
    open_run(load_spec([path]), tmp_path, "r1")
    resumed = open_run(load_spec([path, "workloads.swebench.concurrency=3"]), tmp_path, "r1")
    assert len(resumed.meta()["resumed_at"]) == 1
    with pytest.raises(SpecError, match="different cohort file"):
        open_run(load_spec([path, "sampling.temperature=0.9"]), tmp_path, "r1")


def test_unit_is_done_only_when_its_verdict_parses(write_spec, tmp_path: Path) -> None:
    run = open_run(load_spec([str(write_spec())]), tmp_path, "r1")
    unit = run.unit_dir("patched-mtp5", "django__django-11099", 0)
    assert not run.unit_done("patched-mtp5", "django__django-11099", 0)
    unit.mkdir(parents=True)
    (unit / "verdict.json").write_text('{"schema_version": 1, "status": "compl')  # torn by hand
    assert not run.unit_done("patched-mtp5", "django__django-11099", 0)
    atomic_write_json(unit / "verdict.json", {"schema_version": 1, "status": "completed"})
    assert run.unit_done("patched-mtp5", "django__django-11099", 0)
    assert unit == tmp_path / "r1" / "patched-mtp5" / "units" / "django__django-11099" / "r0"
