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


@pytest.fixture(scope="session")
def tasks(local_set: Path) -> list:
    from eval.spec.models import SWEBenchWorkload
    from eval.tasks.load import load_tasks

    w = SWEBenchWorkload.model_validate({"dataset": "specqual/local", "path": str(local_set)})
    return load_tasks(w, local_set)


def edited_patch(repo: Path, tmp: Path, edits: list[tuple[str, str, str]]) -> str:
    """A patch made the way an agent makes one: edit files in a clone of the base commit, `git diff`."""
    import subprocess

    clone = tmp / f"clone-{len(list(tmp.iterdir()))}"
    subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True)
    for rel, old, new in edits:
        path = clone / rel
        text = path.read_text()
        assert old in text, (rel, old)
        path.write_text(text.replace(old, new))
    return subprocess.run(["git", "-C", str(clone), "diff"], check=True, capture_output=True, text=True).stdout
