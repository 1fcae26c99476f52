"""Fixtures of the agent tests: the local task set (real git repositories). The helper that runs one agent
against the scripted model server is `tests.doubles.scripted_model.run_agent`."""

from __future__ import annotations

from pathlib import Path

import pytest

from eval.protocols import Task
from eval.spec.models import SWEBenchWorkload
from eval.tasks import local_set
from eval.tasks.load import load_tasks


@pytest.fixture(scope="session")
def local_tasks(tmp_path_factory: pytest.TempPathFactory) -> list[Task]:
    directory = tmp_path_factory.mktemp("local-tasks")
    local_set.generate(directory)
    return load_tasks(SWEBenchWorkload(dataset=local_set.LOCAL_DATASET, path=str(directory)), Path(directory))
