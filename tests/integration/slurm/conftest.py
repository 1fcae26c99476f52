"""Slurm integration tests need a running cluster (`bash scripts/slurm/start-cluster.sh`).

Outside CI they skip when `sinfo` does not answer; in CI (`CI` set) a missing cluster is a failure, because
.ci/run starts one.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from eval.executors.slurm import cluster

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="session")
def slurm_cluster() -> None:
    if cluster.cluster_answers():
        return
    if os.environ.get("CI"):
        pytest.fail("CI is set but no Slurm cluster answers: .ci/run must run scripts/slurm/start-cluster.sh")
    pytest.skip("no Slurm cluster answers `sinfo` (start one: bash scripts/slurm/start-cluster.sh)")


@pytest.fixture
def job_env(monkeypatch: pytest.MonkeyPatch, slurm_cluster: None) -> Iterator[None]:
    """Jobs inherit the submitting environment: let them import this repository's test modules."""
    monkeypatch.setenv("PYTHONPATH", f"{REPO}:{os.environ.get('PYTHONPATH', '')}".rstrip(":"))
    monkeypatch.chdir(REPO)
    yield


@pytest.fixture(scope="session")
def local_tasks() -> Path:
    """The local task set where `dataset: specqual/local` finds it (generated once; the loader only reuses it)."""
    from eval.tasks import local_set

    local_set.ensure(local_set.default_dir())
    return local_set.default_dir()
