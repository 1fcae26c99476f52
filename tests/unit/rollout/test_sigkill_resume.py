"""SIGKILL `specqual rollout` mid-run, start it again: the run finishes with no unit lost or duplicated."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time

from tests.doubles.scripted_model import ScriptedModelServer, solver
from tests.fixtures.driver_kill import rollout_argv, unit_state


def test_sigkill_mid_run_then_resume_loses_and_duplicates_nothing(cohort_file, tasks, tmp_path):
    results = tmp_path / "results"
    cohort_dir = results / "killed" / "local"
    with ScriptedModelServer(solver(tasks), delay_s=0.3) as server:
        proc = subprocess.Popen(rollout_argv(cohort_file, server.base_url, results), stderr=subprocess.PIPE)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            done, half = unit_state(cohort_dir)
            if done >= 3 and half >= 1:
                break
            time.sleep(0.05)
        assert proc.poll() is None, "the first run finished before it could be killed"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(30)
        assert proc.returncode == -signal.SIGKILL
        done_at_kill, half_at_kill = unit_state(cohort_dir)
        assert done_at_kill < 12 and half_at_kill >= 1
        first_requests = len(server.requests)

        second = subprocess.run(rollout_argv(cohort_file, server.base_url, results), capture_output=True, text=True)
        assert second.returncode == 0, second.stderr
        assert f"{done_at_kill} already done" in second.stdout
        # exactly the units without a verdict ran again, each from its first turn
        assert len(server.requests) - first_requests == 2 * (12 - done_at_kill)

    assert unit_state(cohort_dir) == (12, 0)
    for unit in cohort_dir.glob("units/*/r*"):
        verdict = json.loads((unit / "verdict.json").read_text())
        assert verdict["status"] == "completed" and verdict["exit_reason"] == "submitted"
        turns = [json.loads(line)["turn"] for line in (unit / "trajectory.jsonl").read_text().splitlines()]
        assert turns == [0, 1]
    predictions = [json.loads(x) for x in (cohort_dir / "predictions.jsonl").read_text().splitlines()]
    keys = [(p["instance_id"], p["repeat"]) for p in predictions]
    assert len(keys) == 12 and len(set(keys)) == 12
    run_json = json.loads((results / "killed" / "run.json").read_text())
    assert len(run_json["resumed_at"]) == 1
    assert not list((results / "killed").rglob(".*.tmp"))
