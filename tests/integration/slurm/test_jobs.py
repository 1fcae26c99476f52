"""Plain Slurm jobs on the test cluster: a batch job, an array, a fake-GPU request, cancelling one array task."""

from __future__ import annotations

from pathlib import Path

import pytest

from eval.executors.slurm import cluster
from tests.fixtures.slurm_jobs import wait_state

pytestmark = pytest.mark.slurm


def _script(tmp_path: Path, body: str, *sbatch: str) -> Path:
    lines = ["#!/bin/bash", f"#SBATCH --output={tmp_path}/%x-%A_%a.out", *(f"#SBATCH {s}" for s in sbatch), body]
    path = tmp_path / "job.sbatch"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_batch_job_runs_and_completes(tmp_path: Path, slurm_cluster: None) -> None:
    job = cluster.submit(_script(tmp_path, f"echo ran-on-$SLURMD_NODENAME > {tmp_path}/out.txt", "--job-name=t1"))
    jobs = wait_state(job)
    assert [j.state for j in jobs] == ["COMPLETED"]
    assert (tmp_path / "out.txt").read_text().startswith("ran-on-")
    assert jobs[0].nodes and jobs[0].exit_code == "0:0"


def test_array_runs_every_task(tmp_path: Path, slurm_cluster: None) -> None:
    body = f"touch {tmp_path}/task-$SLURM_ARRAY_TASK_ID"
    job = cluster.submit(_script(tmp_path, body, "--array=0-3", "--job-name=t2"))
    jobs = wait_state(job)
    assert sorted(i for j in jobs for i in j.task_ids) == [0, 1, 2, 3]
    assert {j.state for j in jobs} == {"COMPLETED"}
    assert sorted(p.name for p in tmp_path.glob("task-*")) == ["task-0", "task-1", "task-2", "task-3"]


def test_cancel_one_array_task_leaves_the_others(tmp_path: Path, slurm_cluster: None) -> None:
    body = f'if [ "$SLURM_ARRAY_TASK_ID" = 1 ]; then sleep 300; fi; touch {tmp_path}/task-$SLURM_ARRAY_TASK_ID'
    job = cluster.submit(_script(tmp_path, body, "--array=0-2", "--job-name=t3"))
    wait_state(job, frozenset({"PENDING"}))
    cluster.cancel([f"{job}_1"])
    states = {i: j.state for j in wait_state(job) for i in j.task_ids}
    assert states == {0: "COMPLETED", 1: "CANCELLED", 2: "COMPLETED"}
    assert not (tmp_path / "task-1").exists()


def test_gpu_request_gets_devices(tmp_path: Path, slurm_cluster: None) -> None:
    node = cluster.run_client(["scontrol", "show", "node", "-o"], "scontrol show node")
    if "gpu:" not in cluster.parse_fields(node.strip()).get("Gres", ""):
        pytest.skip("the cluster's node advertises no GPUs (start-cluster.sh with SPECQUAL_SLURM_GPUS=0)")
    job = cluster.submit(_script(tmp_path, f"echo $CUDA_VISIBLE_DEVICES > {tmp_path}/cvd", "--gres=gpu:2"))
    assert [j.state for j in wait_state(job)] == ["COMPLETED"]
    assert len((tmp_path / "cvd").read_text().strip().split(",")) == 2


def test_unknown_job_is_empty_and_bad_script_is_a_clear_error(tmp_path: Path, slurm_cluster: None) -> None:
    assert cluster.show_jobs("999999999") == []
    bad = _script(tmp_path, "true", "--gres=gpu:1000")
    with pytest.raises(cluster.SlurmError, match=r"sbatch job\.sbatch failed"):
        cluster.submit(bad)
