"""`workloads.soak.around_rollouts` puts the uptime phases around a soak cohort's rollouts (issue 29 item 2)."""

from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path

from eval.pipeline import _uptime_phases
from eval.spec.load import load_spec
from eval.store.run import RunDir

SOAK = str(Path(__file__).resolve().parents[3] / "cohorts" / "soak-cpu.yaml")


def test_only_a_soak_cohorts_rollouts_get_the_phases(tmp_path: Path) -> None:
    on = load_spec([SOAK, "workloads.soak.around_rollouts=true"])
    run = RunDir(tmp_path / "run")
    soaked, plain = on.cohort("pr48132-mtp5"), on.cohort("fixed-off")
    assert not isinstance(_uptime_phases(on, run, soaked, None, around=True), nullcontext)
    assert isinstance(_uptime_phases(on, run, soaked, None, around=False), nullcontext)  # the canary's share
    assert isinstance(_uptime_phases(on, run, plain, None, around=True), nullcontext)  # not a soak cohort
    off = load_spec([SOAK])
    assert isinstance(_uptime_phases(off, run, off.cohort("pr48132-mtp5"), None, around=True), nullcontext)
