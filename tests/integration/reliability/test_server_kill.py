"""The vLLM server killed with SIGKILL in the middle of a real rollout (SmolLM2 on CPU, local set, bwrap, local
grading): the stack's watchdog sees it dead within 10 s and restarts it on the same port; the units in flight
fail as infra, wait for the server, and run again from their first turn; every unit completes, none is an infra
error, none is graded from a torn attempt, and the report notes the restart without changing a count."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import threading
import time
from datetime import datetime
from pathlib import Path

import pytest

from analysis import analyze
from eval.grading.factory import make_grader
from eval.grading.stream import GradeQueue
from eval.rollout.run import grade_when_done, run_rollouts
from eval.stacks.watchdog import EVENTS_FILE
from eval.tasks.load import load_tasks
from tests.fixtures.driver_kill import unit_state
from tests.integration.reliability.conftest import COHORT, Served


def kill_when_units_are_in_flight(served: Served, cohort_dir: Path, killed_at: list[datetime]) -> None:
    """SIGKILL the server process (not its group: vLLM's engine core is left for the watchdog to clean up) once
    a unit has a model response on disk and units are still running."""
    deadline = time.monotonic() + 900
    while time.monotonic() < deadline:
        started = [t for t in cohort_dir.glob("units/*/r*/trajectory.jsonl") if t.stat().st_size > 0]
        if started and unit_state(cohort_dir)[0] == 0:
            os.kill(served.stack.procs[0].pid, signal.SIGKILL)
            killed_at.append(datetime.now().astimezone())
            return
        time.sleep(0.2)


def events(cohort_dir: Path) -> list[dict]:
    return [json.loads(x) for x in (cohort_dir / EVENTS_FILE).read_text().splitlines()]


@pytest.mark.vllm
@pytest.mark.timeout(1500)
def test_server_killed_mid_run_is_restarted_and_costs_only_infra_retries(served: Served):
    loaded, run = served.loaded, served.run
    workload = loaded.spec.workloads.swebench
    assert workload is not None
    tasks = load_tasks(workload, loaded.spec.base_dir)
    cohort_dir = run.cohort_dir(COHORT)
    killed_at: list[datetime] = []
    killer = threading.Thread(target=kill_when_units_are_in_flight, args=(served, cohort_dir, killed_at))
    with GradeQueue(make_grader(workload.grader), "local", 2) as queue:
        killer.start()
        done = grade_when_done(queue.submit, tasks)
        summary = asyncio.run(run_rollouts(loaded, run, COHORT, served.stack.base_url, tasks, on_unit_done=done))
    killer.join()
    assert killed_at, "the run finished before the server could be killed"

    died, restarted = events(cohort_dir)[:2]
    detected_s = (datetime.fromisoformat(died["time"]) - killed_at[0]).total_seconds()
    print(f"server killed: detected in {detected_s:.2f} s, ready again {restarted['ready_s']} s after detection")
    assert died["event"] == "died" and died["exit_code"] == -signal.SIGKILL and detected_s < 10
    assert restarted["event"] == "restarted" and served.stack.alive()

    assert (summary.completed, summary.infra_errors, summary.server_lost) == (12, 0, None)
    verdicts = {p.parent: json.loads(p.read_text()) for p in cohort_dir.glob("units/*/r*/verdict.json")}
    retried = [unit for unit, v in verdicts.items() if v["attempts"] > 1]
    assert retried, "no unit was in flight when the server died"
    for unit in retried:
        assert "InfraError" in (unit / "attempts" / "1" / "error.txt").read_text()
        lines = [json.loads(x) for x in (unit / "trajectory.jsonl").read_text().splitlines()]
        assert lines[0]["turn"] == 0 and all(x["error"] is None for x in lines)  # graded: a whole clean attempt
    grades = [json.loads(p.read_text()) for p in cohort_dir.glob("units/*/r*/grade.json")]
    assert len(grades) == 12 and "infra_error" not in {g["status"] for g in grades}

    s = analyze(run.path).summaries[COHORT]
    assert (s.units, s.graded, s.infra_failures) == (12, 12, 0)
    assert "server restarted 1 times mid-run" in (s.reason or "")
