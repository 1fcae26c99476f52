from __future__ import annotations

from pathlib import Path

import pytest

from eval.tasks.local_set import generate


@pytest.fixture(scope="session")
def local_set(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A freshly generated local task set (read it; copy it before changing it)."""
    out = tmp_path_factory.mktemp("local-set")
    generate(out)
    return out


@pytest.fixture
def task(local_set: Path):
    from eval.spec.models import SWEBenchWorkload
    from eval.tasks.load import load_tasks

    w = SWEBenchWorkload.model_validate({"dataset": "specqual/local", "path": str(local_set)})
    return load_tasks(w, local_set)[0]
