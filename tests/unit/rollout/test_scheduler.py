"""The scheduler: every unit once, resume by what is on disk, infra failures recorded and retried, predictions
rebuilt from the unit directories. Real bwrap sandboxes, a real HTTP server replaying a solving model."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from eval.rollout.run import run_rollouts
from eval.rollout.units import unit_seed
from eval.spec.models import Sampling
from eval.store.run import open_run
from tests.doubles.scripted_model import ScriptedModelServer, scripted, solver


def verdicts(cohort_dir: Path) -> dict[tuple[str, int], dict]:
    out = {}
    for path in cohort_dir.glob("units/*/r*/verdict.json"):
        v = json.loads(path.read_text())
        out[(v["instance_id"], v["repeat"])] = v
    return out


def test_every_unit_runs_once_and_predictions_are_rebuilt(loaded, tasks, tmp_path):
    run = open_run(loaded, tmp_path / "results", "r1")
    finished: list[Path] = []
    with ScriptedModelServer(solver(tasks)) as server:
        summary = asyncio.run(run_rollouts(loaded, run, "local", server.base_url, tasks, on_unit_done=finished.append))
    assert (summary.total, summary.completed, summary.infra_errors, summary.skipped) == (12, 12, 0, 0)
    assert summary.turns == 24 and len(server.requests) == 24
    found = verdicts(run.cohort_dir("local"))
    assert set(found) == {(t.instance_id, r) for t in tasks for r in (0, 1)}
    assert sorted(finished) == sorted(run.unit_dir("local", i, r) for i, r in found)
    for (instance_id, repeat), v in found.items():
        assert v["status"] == "completed" and v["exit_reason"] == "submitted" and v["attempts"] == 1
        assert v["seed"] == unit_seed(loaded.spec.sampling, instance_id, repeat)
        assert v["patch_files"] >= 1 and v["patch_lines_added"] >= 1 and v["turns"] == 2
        unit = run.unit_dir("local", instance_id, repeat)
        assert [json.loads(x)["turn"] for x in (unit / "trajectory.jsonl").read_text().splitlines()] == [0, 1]
    seeds_sent = {r["seed"] for r in server.requests}
    assert len(seeds_sent) == 12  # one per unit
    predictions = [json.loads(x) for x in summary.predictions.read_text().splitlines()]
    assert len(predictions) == 12
    assert {(p["instance_id"], p["repeat"]) for p in predictions} == set(found)
    assert all(p["model_name_or_path"] == "local" and p["model_patch"].startswith("diff --git") for p in predictions)
    per_repeat = (run.cohort_dir("local") / "predictions.r1.jsonl").read_text().splitlines()
    assert sorted(json.loads(x)["instance_id"] for x in per_repeat) == sorted(t.instance_id for t in tasks)


def test_resume_skips_done_units_and_restarts_half_finished_ones(loaded, tasks, tmp_path):
    run = open_run(loaded, tmp_path / "results", "r2")
    with ScriptedModelServer(solver(tasks)) as server:
        asyncio.run(run_rollouts(loaded, run, "local", server.base_url, tasks[:2]))
    done_unit = run.unit_dir("local", tasks[0].instance_id, 0)
    before = (done_unit / "verdict.json").read_bytes()
    half = run.unit_dir("local", tasks[1].instance_id, 1)
    (half / "verdict.json").write_text('{"schema_version": 1, "status": "compl')  # a torn write
    (half / "stray.txt").write_text("left by a killed run")
    with ScriptedModelServer(solver(tasks)) as server:
        summary = asyncio.run(run_rollouts(loaded, run, "local", server.base_url, tasks[:2]))
    assert (summary.skipped, summary.completed) == (3, 1)
    assert len(server.requests) == 2  # only the half-finished unit ran again
    assert (done_unit / "verdict.json").read_bytes() == before
    assert not (half / "stray.txt").exists()
    assert json.loads((half / "verdict.json").read_text())["status"] == "completed"


def test_server_failures_become_infra_errors_after_the_retry_cap(loaded, tasks, tmp_path):
    run = open_run(loaded, tmp_path / "results", "r3")
    with ScriptedModelServer(scripted([{"http_status": 500, "text": "engine dead"}])) as server:
        summary = asyncio.run(run_rollouts(loaded, run, "local", server.base_url, tasks[:1]))
    assert (summary.completed, summary.infra_errors) == (0, 2)
    assert len(server.requests) == 4  # 2 units x (1 + max_infra_retries) attempts, request_retries 0
    for v in verdicts(run.cohort_dir("local")).values():
        assert v["status"] == "infra_error" and v["exit_reason"] is None and v["attempts"] == 2
        assert "HTTP 500" in v["infra_reason"]
    unit = run.unit_dir("local", tasks[0].instance_id, 0)
    assert "HTTP 500" in json.loads((unit / "attempts" / "1" / "trajectory.jsonl").read_text())["error"]
    assert (unit / "attempts" / "2" / "error.txt").exists()
    assert summary.predictions.read_text() == ""  # infra units are never predictions


def test_a_sandbox_that_cannot_start_is_infra(loaded, tasks, tmp_path):
    run = open_run(loaded, tmp_path / "results", "r4")

    def broken(task):
        raise OSError("no space left on device")

    with ScriptedModelServer(solver(tasks)) as server:
        summary = asyncio.run(run_rollouts(loaded, run, "local", server.base_url, tasks[:1], sandbox_factory=broken))
    assert summary.infra_errors == 2 and server.requests == []
    reasons = {v["infra_reason"] for v in verdicts(run.cohort_dir("local")).values()}
    assert reasons == {"sandbox could not start: OSError: no space left on device"}


def test_seeds_are_stable_per_unit_and_follow_the_policy():
    per_unit = Sampling(seed=5, seed_policy="per_unit")
    assert unit_seed(per_unit, "a__b-1", 0) == unit_seed(per_unit, "a__b-1", 0)
    assert unit_seed(per_unit, "a__b-1", 0) != unit_seed(per_unit, "a__b-1", 1)
    assert unit_seed(per_unit, "a__b-1", 0) != unit_seed(Sampling(seed=6), "a__b-1", 0)
    assert unit_seed(per_unit, "a__b-1", 0) == 983523984  # sha256-based: the same on every machine
    assert unit_seed(Sampling(seed=5, seed_policy="fixed"), "x", 3) == 5
    assert unit_seed(Sampling(seed_policy="none"), "x", 3) is None
