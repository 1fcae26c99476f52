"""Fixtures of the scheduler tests: a cohort file over the local task set, loaded, and a run directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from eval.protocols import Task
from eval.spec.load import LoadedSpec, load_spec
from eval.tasks import local_set
from eval.tasks.load import load_tasks

COHORT_FILE = """\
name: rollout-test
model: {path: /models/scripted, served_name: scripted, tool_call_parser: hermes}
builds: {local: {env: /opt/none}}
speculative: {off: {method: null}}
sampling: {temperature: 0.0, seed: 3, seed_policy: per_unit}
workloads:
  swebench:
    dataset: specqual/local
    path: tasks
    repeats: 2
    concurrency: 3
    max_infra_retries: 1
    agent: {kind: toolcall, max_turns: 5, request_retries: 0}
    sandbox: {kind: bwrap, memory_gb: 4}
"""


@pytest.fixture(scope="session")
def task_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("local-tasks")
    local_set.generate(directory)
    return directory


@pytest.fixture
def cohort_file(tmp_path: Path, task_dir: Path) -> Path:
    (tmp_path / "tasks").symlink_to(task_dir)
    path = tmp_path / "cohort.yaml"
    path.write_text(COHORT_FILE, encoding="utf-8")
    return path


@pytest.fixture
def loaded(cohort_file: Path) -> LoadedSpec:
    return load_spec([str(cohort_file)])


@pytest.fixture
def tasks(loaded: LoadedSpec) -> list[Task]:
    workload = loaded.spec.workloads.swebench
    assert workload is not None
    return load_tasks(workload, loaded.spec.base_dir)
