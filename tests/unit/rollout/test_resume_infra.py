"""Resume re-runs infra errors: a unit whose verdict is an infra error is run again by a resumed run, never counted
as done; an early-stopped cohort keeps its decision and starts no new unit, but re-runs its infra errors.

Real scheduler, real bwrap sandboxes, a real HTTP server (`ScriptedModelServer`, the test double of the model
server): first answering HTTP 500 (a killed engine), then replaying a solving model.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from eval.rollout.run import run_rollouts
from eval.rollout.stopper import RECORD, EarlyStop
from eval.rollout.units import infra_units, plan_units
from eval.store.run import open_run
from store.decisions import Comparison, Decisions
from tests.doubles.scripted_model import ScriptedModelServer, scripted, solver


def statuses(cohort_dir: Path) -> dict[tuple[str, int], str]:
    out = {}
    for path in cohort_dir.glob("units/*/r*/verdict.json"):
        v = json.loads(path.read_text())
        out[(v["instance_id"], v["repeat"])] = v["status"]
    return out


def test_a_resumed_run_runs_its_infra_errors_again(loaded, tasks, tmp_path):
    run = open_run(loaded, tmp_path / "results", "r1")
    with ScriptedModelServer(scripted([{"http_status": 500, "text": "engine killed"}])) as server:
        first = asyncio.run(run_rollouts(loaded, run, "local", server.base_url, tasks[:1]))
    assert (first.completed, first.infra_errors) == (0, 2)
    todo, done = plan_units(run, "local", tasks[:1], 2)
    assert (len(todo), done) == (2, 0)  # an infra error is not done
    assert len(infra_units(run, "local", tasks[:1], 2)) == 2
    with ScriptedModelServer(solver(tasks)) as server:
        second = asyncio.run(run_rollouts(loaded, run, "local", server.base_url, tasks[:1]))
    assert (second.skipped, second.completed, second.infra_errors) == (0, 2, 0)
    assert set(statuses(run.cohort_dir("local")).values()) == {"completed"}
    assert infra_units(run, "local", tasks[:1], 2) == []
    predictions = second.predictions.read_text().splitlines()
    assert len(predictions) == 2  # the re-run units are predictions now
    # a third resume has nothing left to run
    with ScriptedModelServer(solver(tasks)) as server:
        third = asyncio.run(run_rollouts(loaded, run, "local", server.base_url, tasks[:1]))
    assert (third.skipped, third.completed) == (2, 0) and server.requests == []


def decided(_run_dir: Path) -> Decisions:
    """The analysis's answer once the comparison is decided (as `python -m analysis decide --json` gives it)."""
    fail = Comparison(control="ref", decision="FAIL", decided_at=1, prefix=1, planned=6, estimate=0.5, lower=0.1,
                      upper=0.9, margin=0.03, alpha=0.05)  # fmt: skip
    return Decisions(method="test", repeats=2, comparisons={"local": fail})


def test_an_early_stopped_cohort_reruns_only_its_infra_errors(loaded, tasks, tmp_path):
    run = open_run(loaded, tmp_path / "results", "r2")
    with ScriptedModelServer(solver(tasks)) as server:
        asyncio.run(run_rollouts(loaded, run, "local", server.base_url, tasks[:1]))
    with ScriptedModelServer(scripted([{"http_status": 500, "text": "engine killed"}])) as server:
        asyncio.run(run_rollouts(loaded, run, "local", server.base_url, tasks[1:2]))
    assert sorted(statuses(run.cohort_dir("local")).values()) == ["completed"] * 2 + ["infra_error"] * 2
    stop = EarlyStop(run.path, "local", ask=decided, log=lambda _: None)
    assert stop.check() and (run.cohort_dir("local") / RECORD).is_file()
    resumed = EarlyStop(run.path, "local", ask=decided, log=lambda _: None)
    with ScriptedModelServer(solver(tasks)) as server:
        counts = asyncio.run(run_rollouts(loaded, run, "local", server.base_url, tasks[:3], early_stop=resumed))
    # the decision stands (tasks[2] never starts), the two infra-error units ran again and completed
    assert counts.stopped_early is not None and counts.completed == 2 and counts.infra_errors == 0
    found = statuses(run.cohort_dir("local"))
    assert set(found.values()) == {"completed"} and len(found) == 4
    assert not any(i == tasks[2].instance_id for i, _ in found)
