"""The real thing on the test cluster: a vLLM CPU server (SmolLM2) as a Slurm job, the local task set's
tool-call rollouts as a Slurm job array with one task cancelled mid-run and resubmitted, and the results equal
to the local executor's (the in-process rollout runner against the same server, same seeds)."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest

from eval.executors.slurm import SlurmExecutor, cluster
from eval.executors.slurm.rollouts import Submission, run_array
from eval.executors.status import run_status
from eval.spec.load import load_spec
from eval.store.atomic import read_json
from eval.store.run import RunDir, open_run, safe_name

pytestmark = [pytest.mark.slurm, pytest.mark.vllm]
REPO = Path(__file__).resolve().parents[3]
COHORT = "stock-off"
# Fields that differ between two identical runs: timings, request and tool-call ids (vLLM draws them at random).
_VOLATILE = re.compile(r"latency|wall|_at$|^t$|^id$|request_id|time|log_path")


def normalized(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: normalized(v) for k, v in sorted(value.items()) if not _VOLATILE.search(k)}
    if isinstance(value, list):
        return [normalized(v) for v in value]
    return value


def unit_records(run: RunDir) -> dict[str, dict[str, Any]]:
    """unit path -> verdict, grade, trajectory lines and patch, without volatile fields."""
    out = {}
    for unit in sorted((run.cohort_dir(COHORT) / "units").glob("*/r*")):
        lines = (unit / "trajectory.jsonl").read_text().splitlines() if (unit / "trajectory.jsonl").exists() else []
        out[f"{unit.parent.name}/{unit.name}"] = normalized(
            {
                "verdict": read_json(unit / "verdict.json"),
                "grade": read_json(unit / "grade.json"),
                "trajectory": [json.loads(line) for line in lines],
                "patch": (unit / "patch.diff").read_text() if (unit / "patch.diff").exists() else None,
            }
        )
    return out


def grade(run: RunDir, workload: Any, tasks: list[Any]) -> None:
    """Grade every unit with the workload's grader (the local grader: the harness's rules, in bwrap)."""
    from eval.grading.factory import make_grader
    from eval.grading.stream import GradeQueue

    by_dir = {safe_name(t.instance_id): t for t in tasks}
    grader = make_grader(workload.grader, log_root=run.path / "harness-logs")
    with GradeQueue(grader, workload.grader.kind, workers=1) as queue:
        futures = [queue.submit(by_dir[u.parent.name], u) for u in (run.cohort_dir(COHORT) / "units").glob("*/r*")]
    assert all(f.result() is not None for f in futures)


def test_slurm_stack_and_array_equal_the_local_executor(tmp_path: Path, job_env: None, local_tasks: Path) -> None:
    from eval.pipeline import model_path, write_cohorts
    from eval.rollout.run import run_rollouts
    from eval.stacks import ensure_build
    from eval.tasks.load import load_tasks

    overrides = [
        "workloads.swebench.repeats=1",
        "workloads.swebench.concurrency=1",
        "executor.slurm.poll_interval_s=0.5",
    ]
    loaded = load_spec([str(REPO / "cohorts" / "slurm-cpu.yaml"), *overrides])
    cohort = loaded.cohort(COHORT)
    model = model_path(loaded)
    build = ensure_build(loaded.spec, cohort.factors["build"])
    slurm_run, local_run = open_run(loaded, tmp_path, "slurm"), open_run(loaded, tmp_path, "local")
    for run in (slurm_run, local_run):
        write_cohorts(loaded, run, str(model))
    assert loaded.spec.workloads.swebench is not None
    tasks = load_tasks(loaded.spec.workloads.swebench, loaded.spec.base_dir)
    cancelled: list[str] = []

    def cancel_task_1_mid_run(sub: Submission) -> None:
        if cancelled or sub.number != 0 or sub.task_states.get(1) != "RUNNING":
            return
        if any(slurm_run.unit_done(COHORT, i, 0) for i in sub.shards[1]):
            cluster.cancel([f"{sub.job_id}_1"])
            cancelled.append(sub.job_id)

    with SlurmExecutor(loaded).stack(cohort, model, slurm_run.path, build) as stack:
        assert stack.job_id and stack.endpoints["server.0"].node
        summary = run_array(loaded, slurm_run, cohort, stack.base_url, on_poll=cancel_task_1_mid_run)
        local = asyncio.run(run_rollouts(loaded, local_run, cohort, stack.base_url, tasks))
        status = run_status(slurm_run.path)[0]
        # "running", or "running (recorded)" when scontrol is too slow to answer on a loaded machine
        assert status.stack.startswith("running") and status.done + status.failed == len(tasks)
        assert {j.job_id for j in status.jobs} == {stack.job_id, *summary.job_ids}

    assert summary.done == summary.units == len(tasks) and local.total == len(tasks)
    if cancelled:  # (a shard that finished both units between two polls cannot be cancelled mid-run)
        first, second = summary.submissions
        assert first.task_states[1] == "CANCELLED" and len(second.shards) == 1
        assert set(second.shards[0]) < set(first.shards[1])  # only the instance left unfinished
    prov = read_json(slurm_run.cohort_dir(COHORT) / "stack.json")
    assert prov["slurm"]["job_id"] == stack.job_id and prov["slurm"]["nodes"] and prov["stopped_at"]
    assert prov["vllm_version"] == "0.32.0"
    for run in (slurm_run, local_run):
        grade(run, loaded.spec.workloads.swebench, tasks)
    slurm_units, local_units = unit_records(slurm_run), unit_records(local_run)
    assert len(slurm_units) == len(tasks) and all(u["grade"] for u in slurm_units.values())
    assert sum(len(u["trajectory"]) for u in slurm_units.values()) > 0  # the model was really asked
    assert slurm_units == local_units
