"""Rollout arrays on the test cluster with a stand-in unit writer (the real runner: test_vllm_slurm.py):
every unit gets done, and an array task cancelled mid-run is resubmitted for its unfinished units only."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from eval.executors.slurm import cluster
from eval.executors.slurm.record import jobs_of
from eval.executors.slurm.rollouts import Runner, Submission, run_array
from eval.executors.slurm.shard import ShardPlan
from eval.spec.load import load_spec
from eval.store.run import open_run

pytestmark = pytest.mark.slurm
REPO = Path(__file__).resolve().parents[3]
RUNNER = "tests.doubles.slurm_standin_runner:write_units"


def _loaded(shards: int) -> object:
    overrides = [f"executor.slurm.shards={shards}", "executor.slurm.poll_interval_s=0.3", "executor.slurm.resubmits=1"]
    return load_spec([str(REPO / "cohorts" / "slurm-cpu.yaml"), *overrides])


def starts(cohort_dir: Path) -> list[dict[str, object]]:
    path = cohort_dir / "standin-starts.log"
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_array_runs_every_unit_once(tmp_path: Path, job_env: None, local_tasks: Path) -> None:
    loaded = _loaded(shards=3)
    run = open_run(loaded, tmp_path, "r")
    summary = run_array(loaded, run, "stock-off", "http://unused", runner=Runner(RUNNER, {"sleep_s": 0.05}))
    assert summary.units == 12 and summary.done == 12 and summary.unfinished == 0
    assert len(summary.submissions) == 1 and len(summary.submissions[0].shards) == 3
    units = [s["unit"] for s in starts(run.cohort_dir("stock-off"))]
    assert len(units) == len(set(units)) == 12
    assert [j.job_id for j in jobs_of(run.cohort_dir("stock-off"), "rollout")] == summary.job_ids


def test_cancelled_task_is_resubmitted_for_its_unfinished_units_only(
    tmp_path: Path, job_env: None, local_tasks: Path
) -> None:
    loaded = _loaded(shards=3)
    run = open_run(loaded, tmp_path, "r")
    cdir = run.cohort_dir("stock-off")
    cancelled: dict[str, object] = {}

    def cancel_task_1_mid_run(sub: Submission) -> None:
        if cancelled or sub.task_states.get(1) != "RUNNING":
            return
        done = [(i, r) for i in sub.shards[1] for r in range(2) if run.unit_done("stock-off", i, r)]
        if done:  # one unit of shard 1 finished, the others not yet: cancel now
            cluster.cancel([f"{sub.job_id}_1"])
            cancelled.update(job=sub.job_id, done=done)

    slow = Runner(RUNNER, {"sleep_s": 1.5})
    summary = run_array(loaded, run, "stock-off", "http://unused", runner=slow, on_poll=cancel_task_1_mid_run)
    assert cancelled, "task 1 was never seen running with a finished unit"
    assert summary.done == 12 and summary.unfinished == 0
    first, second = summary.submissions
    assert first.task_states[1] == "CANCELLED" and first.task_states[0] == first.task_states[2] == "COMPLETED"
    # The resubmission holds one shard: shard 1's instances that still had unfinished units.
    shard1 = first.shards[1]
    assert len(second.shards) == 1 and set(second.shards[0]) <= set(shard1)
    plan = ShardPlan.read(cdir / "slurm" / "shards-1.json")
    assert plan.shards == second.shards and plan.submission == 1
    # Units done before the cancel never ran again; every unit started again belongs to shard 1.
    again = [s["unit"] for s in starts(cdir) if s["submission"] == 1]
    done_before = {f"{i}/r{r}" for i, r in cancelled["done"]}  # type: ignore[attr-defined]
    assert again and not done_before & set(again)
    assert {u.split("/")[0] for u in again} <= set(shard1)
    first_units = [s["unit"] for s in starts(cdir) if s["submission"] == 0]
    assert len(first_units) == len(set(first_units))  # no unit twice within a submission
    states = {j.job_id: j.task_states for j in jobs_of(cdir, "rollout")}
    assert states[first.job_id]["1"] == "CANCELLED"  # type: ignore[index]


def test_a_secret_override_reaches_the_tasks_but_no_file(tmp_path: Path, job_env: None, local_tasks: Path) -> None:
    secret = "hf_SECRETarrayoverride"
    override = f"server.env.HF_TOKEN={secret}"
    loaded = load_spec([*_loaded(shards=2).sources, override])  # type: ignore[attr-defined]
    run = open_run(loaded, tmp_path, "r")
    runner = Runner("tests.doubles.slurm_standin_runner:reveal_sources", {"sleep_s": 0.05})
    summary = run_array(loaded, run, "stock-off", "http://unused", runner=runner)
    assert summary.done == 12
    seen = json.loads((run.cohort_dir("stock-off") / "standin-sources.json").read_text())
    assert hashlib.sha256(override.encode()).hexdigest() in seen  # the task loaded the override itself
    files = [p for p in run.path.rglob("*") if p.is_file()]
    assert any(p.name == "shards-0.json" for p in files) and any(p.suffix == ".sbatch" for p in files)
    for p in files:
        assert secret.encode() not in p.read_bytes(), f"the secret is in {p.relative_to(run.path)}"
