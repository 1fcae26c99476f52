"""`specqual rollout --grade` SIGKILLed at random moments of a real run (SmolLM2 on real vLLM CPU, local set,
bwrap sandboxes, local grading), restarted after each kill: at the end no unit is missing or duplicated, every
verdict parses, and the analysis's cohort table equals the one of an uninterrupted run with the same seeds.

Kill points come from a fixed RNG seed: `SPECQUAL_KILL_POINTS` kills (3 in CI; the issue's full 20 with
`SPECQUAL_KILL_POINTS=20 .venv/bin/python -m pytest tests/integration/reliability/test_driver_kill.py`), each at a
uniform moment between 0.5 s and 70% of the reference run's time for the waves of units left plus one for the
start-up (`concurrency` units run at once, and a killed unit starts again from scratch), so kills land in
start-up, mid-unit, in grading and in between, and the run still has work left at each kill. One server serves
every run (the package's fixture): a driver restart must not restart vLLM.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import time
from pathlib import Path

import pytest

from analysis import analyze
from analysis.tables import cohort_table
from eval.classify.rundir import classify_run
from tests.fixtures.driver_kill import rollout_argv, unit_state
from tests.integration.reliability.conftest import COHORT, COHORT_FILE, Served

KILL_POINTS = int(os.environ.get("SPECQUAL_KILL_POINTS", "3"))
KILL_SEED = int(os.environ.get("SPECQUAL_KILL_SEED", "20261202"))
UNITS = 12


def waves(units: int, concurrency: int = 4) -> int:
    """Rounds of `concurrency` units (workloads.swebench.concurrency of the package's overrides)."""
    return -(-units // concurrency)


def argv(served: Served, run_id: str) -> list[str]:
    overrides = [x for o in served.overrides for x in ("-c", o)]
    return rollout_argv(COHORT_FILE, served.stack.base_url, served.results, COHORT, run_id, *overrides, "--grade")


def finish(served: Served, run_id: str) -> float:
    """Run to the end without a kill; the wall time."""
    started = time.monotonic()
    done = subprocess.run(argv(served, run_id), capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stderr[-3000:]
    return time.monotonic() - started


def kill_repeatedly(served: Served, run_id: str, reference_s: float) -> list[tuple[float, int, int]]:
    """Start, SIGKILL at a random moment, repeat; (delay, units done, half-done units) after each kill."""
    rng = random.Random(KILL_SEED)
    cohort_dir = served.results / run_id / COHORT
    kills: list[tuple[float, int, int]] = []
    while len(kills) < KILL_POINTS and unit_state(cohort_dir)[0] < UNITS:
        left = UNITS - unit_state(cohort_dir)[0]
        delay = rng.uniform(0.5, max(1.0, 0.7 * reference_s * (waves(left) + 1) / (waves(UNITS) + 1)))
        proc = subprocess.Popen(argv(served, run_id), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            proc.wait(delay)
            continue  # it finished first: nothing was killed at this point
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(30)
        kills.append((round(delay, 2), *unit_state(cohort_dir)))
    return kills


def check_units(run_dir: Path) -> None:
    cohort_dir = run_dir / COHORT
    verdicts = [json.loads(p.read_text()) for p in cohort_dir.glob("units/*/r*/verdict.json")]  # every one parses
    keys = [(v["instance_id"], v["repeat"]) for v in verdicts]
    assert len(keys) == UNITS and len(set(keys)) == UNITS and unit_state(cohort_dir) == (UNITS, 0)
    predictions = [json.loads(x) for x in (cohort_dir / "predictions.jsonl").read_text().splitlines()]
    assert sorted((p["instance_id"], p["repeat"]) for p in predictions) == sorted(keys)
    assert len(list(cohort_dir.glob("units/*/r*/grade.json"))) == UNITS
    assert not list(run_dir.rglob(".*.tmp"))


@pytest.mark.vllm
@pytest.mark.timeout(1500)
def test_driver_killed_at_random_points_resumes_to_the_uninterrupted_table(served: Served):
    reference_s = finish(served, "uninterrupted")
    kills = kill_repeatedly(served, "killed", reference_s)
    finish(served, "killed")
    print(f"reference run {reference_s:.1f} s; kills (delay s, done, half-done): {kills}")
    assert len(kills) == KILL_POINTS, f"the run finished after {len(kills)} of {KILL_POINTS} kills"
    tables = {}
    for run_id in ("uninterrupted", "killed"):
        run_dir = served.results / run_id
        check_units(run_dir)
        classify_run(run_dir)
        table = cohort_table(analyze(run_dir))
        tables[run_id] = (table.header, table.rows)
    assert tables["killed"] == tables["uninterrupted"]
    resumed = json.loads((served.results / "killed" / "run.json").read_text())["resumed_at"]
    assert resumed  # the same run was resumed (a kill during start-up may come before the run is opened)
