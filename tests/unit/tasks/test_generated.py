"""The generated task set: deterministic, split-disjoint, and every instance's gold patch resolves it while the
empty patch does not (checked by running the instance's tests, as the local grader does)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from eval.spec.models import SWEBenchWorkload
from eval.tasks import generated
from eval.tasks.load import load_tasks
from eval.tasks.records import TaskError


@pytest.fixture(scope="module")
def heldout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("generated")
    generated.generate(out, "heldout", 8)  # two instances of each family
    return out


def rows(set_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (set_dir / "instances.jsonl").read_text().splitlines()]


def test_deterministic_and_every_family(heldout: Path, tmp_path: Path) -> None:
    generated.generate(tmp_path, "heldout", 8)
    assert (tmp_path / "instances.jsonl").read_bytes() == (heldout / "instances.jsonl").read_bytes()
    assert sorted({r["hints_text"] for r in rows(heldout)}) == sorted(generated.FAMILIES)


def test_splits_never_share_an_instance() -> None:
    train = {generated.make_spec("train", i).problem_statement for i in range(200)}
    held = {generated.make_spec("heldout", i).problem_statement for i in range(200)}
    assert len(train) == 200 and len(held) == 200
    assert not train & held


def test_statement_carries_the_edit(heldout: Path) -> None:
    for row in rows(heldout):
        path, old, new = generated.fix_of(row)
        assert f"-{old}" in row["patch"].replace(" ", "") or old.replace(" ", "") in row["patch"].replace(" ", "")
        assert f"+++ b/{path}" in row["patch"]
        assert not set("|[]*^$\\&'\"") & set(old + new)  # safe in sed -i 's|OLD|NEW|' FILE


def _run_tests(repo: Path, row: dict, tmp: Path, patch: str) -> bool:
    work = tmp / row["instance_id"]
    shutil.copytree(repo, work)
    for text in (patch, row["test_patch"]):
        if text:
            subprocess.run(["git", "apply", "-"], cwd=work, input=text, text=True, check=True)
    tests = json.loads(row["FAIL_TO_PASS"]) + json.loads(row["PASS_TO_PASS"])
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}  # as the eval script runs them
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests], cwd=work, capture_output=True, env=env
    )
    shutil.rmtree(work)
    return done.returncode == 0


def test_gold_resolves_and_empty_does_not(heldout: Path, tmp_path: Path) -> None:
    for row in rows(heldout)[:4]:  # one per family
        repo = heldout / "repos" / row["repo"].split("/")[1]
        assert _run_tests(repo, row, tmp_path, row["patch"]), row["instance_id"]
        assert not _run_tests(repo, row, tmp_path, ""), row["instance_id"]


def test_the_sed_edit_of_the_statement_is_the_gold_patch(heldout: Path, tmp_path: Path) -> None:
    for row in rows(heldout)[:4]:
        path, old, new = generated.fix_of(row)
        work = tmp_path / row["instance_id"]
        shutil.copytree(heldout / "repos" / row["repo"].split("/")[1], work)
        subprocess.run(["sed", "-i", f"s|{old}|{new}|", path], cwd=work, check=True)
        diff = subprocess.run(["git", "diff"], cwd=work, capture_output=True, text=True, check=True).stdout
        assert diff == row["patch"]


def test_dataset_name_loads_a_split(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPECQUAL_CACHE", str(tmp_path))
    workload = SWEBenchWorkload(dataset=generated.DATASET, split="heldout", limit=3)
    monkeypatch.setattr(generated, "DEFAULT_COUNT", {"train": 3, "heldout": 3})
    tasks = load_tasks(workload, tmp_path)
    assert [t.instance_id for t in tasks] == [f"specqual__{generated.make_spec('heldout', i).name}-1" for i in range(3)]
    with pytest.raises(TaskError, match="splits"):
        load_tasks(SWEBenchWorkload(dataset=generated.DATASET, split="test"), tmp_path)
