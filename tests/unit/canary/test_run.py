"""`run_canary` when stacks cannot start: every expected record exists as an infra error, and no stack leaks."""

from __future__ import annotations

import io
import threading
from pathlib import Path
from typing import Any

from rich.console import Console

from eval.canary.records import read_records
from eval.canary.run import run_canary
from eval.models.tiny_nemotron_h import generate
from eval.spec.load import load_spec
from eval.spec.matrix import Cohort
from eval.store.run import open_run

DEMO = Path(__file__).resolve().parents[3] / "cohorts" / "canary-cpu.yaml"


class NeverStarts:
    """A stack whose start fails, as a crashed server would (records how many were starting at once)."""

    lock = threading.Lock()
    starting = 0
    most = 0

    def __init__(self, cohort: Cohort) -> None:
        self.cohort = cohort

    def __enter__(self) -> Any:
        with NeverStarts.lock:
            NeverStarts.starting += 1
            NeverStarts.most = max(NeverStarts.most, NeverStarts.starting)
        threading.Event().wait(0.05)
        with NeverStarts.lock:
            NeverStarts.starting -= 1
        raise RuntimeError(f"server for {self.cohort.name} exited with code 1")

    def __exit__(self, *exc: object) -> None:
        raise AssertionError("a stack that never started must not be stopped")


def test_start_failures_become_infra_errors(tmp_path: Path) -> None:
    loaded = load_spec([str(DEMO), "workloads.canary.probes_per_mode=2"])
    run = open_run(loaded, tmp_path, "r")
    model = generate(tmp_path / "models", 0, {})
    summaries = run_canary(loaded, run, model, console=Console(file=io.StringIO()), stacks_factory=NeverStarts)
    assert set(summaries) == {c.name for c in loaded.cohorts if c.runs("canary")}
    assert all(s.verdict == "failed" for s in summaries.values())
    recs = read_records(run.cohort_dir("fixed-mtp5"))
    assert len(recs) == 2 * (1 + 2 + 1 + 3)  # per probe: 1, 2, 1 and 3 requests
    assert all("exited with code 1" in (r.infra_error or "") for r in recs.values())
    assert NeverStarts.most <= 2
