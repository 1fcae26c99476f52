from __future__ import annotations

import pytest

from eval.protocols import Task


@pytest.fixture
def task(tasks: list[Task]) -> Task:
    return tasks[0]
