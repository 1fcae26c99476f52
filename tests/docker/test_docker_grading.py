"""Opt-in: one real SWE-bench Verified instance graded by the harness in docker, and the docker sandbox.

Needs a docker engine, the instance image, and a local copy of the dataset (the hub is never contacted in
tests): SPECQUAL_SWEBENCH_DATASET=/path/to/verified.parquet (or .jsonl) and optionally
SPECQUAL_DOCKER_INSTANCE (default astropy__astropy-12907). Skips, saying which is missing, otherwise.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from eval.sandbox.docker import DockerSandbox, instance_image
from eval.spec.models import SWEBenchWorkload
from eval.tasks.load import load_tasks

pytestmark = pytest.mark.docker
INSTANCE = os.environ.get("SPECQUAL_DOCKER_INSTANCE", "astropy__astropy-12907")


@pytest.fixture(scope="module")
def client():
    docker = pytest.importorskip("docker", reason="the docker SDK is not installed (pip install 'specqual[swebench]')")
    try:
        engine = docker.from_env()
        engine.ping()
    except Exception as e:
        pytest.skip(f"no docker engine answers ({type(e).__name__}): start dockerd to run this tier")
    return engine


@pytest.fixture(scope="module")
def task(client):
    dataset = os.environ.get("SPECQUAL_SWEBENCH_DATASET")
    if not dataset:
        pytest.skip("set SPECQUAL_SWEBENCH_DATASET to a local SWE-bench Verified copy (.parquet/.jsonl)")
    workload = SWEBenchWorkload.model_validate(
        {"dataset": "SWE-bench/SWE-bench_Verified", "path": dataset, "instances": [INSTANCE]}
    )
    found = load_tasks(workload, Path("."))[0]
    image = instance_image(found)
    try:
        client.images.get(image)
    except Exception:
        pytest.skip(f"image {image} is not present: docker pull {image}")
    return found


def test_gold_resolves_and_empty_does_not(task, tmp_path: Path) -> None:
    from eval.grading.docker import DockerGrader

    gold = DockerGrader(timeout_s=1800, log_root=tmp_path / "harness").grade(task, task.patch, tmp_path / "gold")
    assert gold.status == "resolved", gold
    assert (tmp_path / "gold" / "report.json").is_file()
    empty = DockerGrader(timeout_s=1800, log_root=tmp_path / "harness", run_empty=True)
    assert empty.grade(task, "", tmp_path / "empty").status == "unresolved"


def test_sandbox_has_no_network_and_is_removed(client, task) -> None:
    box = DockerSandbox(task, cpus=1, memory_gb=4, client=client)
    container_id = box._container.id
    try:
        net = box.execute("python -c \"import socket; socket.create_connection(('1.1.1.1', 53), timeout=5)\"", 60)
        assert net.exit_code != 0
        assert box.execute("echo hi > NEW_FILE.txt", 30).exit_code == 0
        assert "+++ b/NEW_FILE.txt" in box.diff()
        slow = box.execute("sleep 600", timeout_s=3)
        assert slow.timed_out
    finally:
        box.close()
    assert container_id not in {c.id for c in client.containers.list(all=True)}
