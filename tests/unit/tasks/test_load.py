"""Loading tasks: sources, selection order, exclusions, and refusing malformed records."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from eval.spec.models import SWEBenchWorkload
from eval.tasks.load import load_tasks
from eval.tasks.records import REPO_PATH_KEY, TaskError

HEADER = "# specqual-exclusions v1 version=test-1\n"


def workload(**fields: object) -> SWEBenchWorkload:
    return SWEBenchWorkload.model_validate({"dataset": "specqual/local", **fields})


def rows(local_set: Path) -> list[dict]:
    return [json.loads(line) for line in (local_set / "instances.jsonl").read_text().splitlines()]


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_local_set_directory(local_set: Path) -> None:
    tasks = load_tasks(workload(path=str(local_set)), Path("."))
    assert [t.instance_id for t in tasks][:2] == ["specqual__calc-1", "specqual__textkit-1"]
    calc = tasks[0]
    assert calc.fail_to_pass == ["tests/test_stats.py::test_mean", "tests/test_stats.py::test_mean_single"]
    assert Path(calc.raw[REPO_PATH_KEY]) == local_set / "repos" / "calc"


def test_relative_path_resolves_against_base_dir(local_set: Path) -> None:
    tasks = load_tasks(workload(path=local_set.name), local_set.parent)
    assert len(tasks) == len(rows(local_set))


def test_jsonl_and_parquet_copies_give_the_same_tasks(local_set: Path, tmp_path: Path) -> None:
    jsonl = write_jsonl(tmp_path / "d.jsonl", rows(local_set))
    parquet = tmp_path / "d.parquet"
    pd.DataFrame(rows(local_set)).to_parquet(parquet)
    from_jsonl = load_tasks(workload(dataset="x", path=str(jsonl)), tmp_path)
    from_parquet = load_tasks(workload(dataset="x", path=str(parquet)), tmp_path)
    assert [t.instance_id for t in from_jsonl] == [t.instance_id for t in from_parquet]
    assert from_jsonl[2].pass_to_pass == from_parquet[2].pass_to_pass


def test_selection_order_instances_filter_exclude_limit(local_set: Path, tmp_path: Path) -> None:
    excl = tmp_path / "excl.txt"
    excl.write_text(HEADER + "specqual__intervals-1  gold patch fails\n")
    w = workload(path=str(local_set), filter=r"__(calc|intervals|stackq|pager)-", exclude=str(excl), limit=2)
    # filter: calc, intervals, stackq, pager; the exclusion drops intervals; the limit keeps the first two
    assert [t.instance_id for t in load_tasks(w, tmp_path)] == ["specqual__calc-1", "specqual__stackq-1"]
    only = workload(path=str(local_set), instances=["specqual__pager-1", "specqual__calc-1"])
    assert [t.instance_id for t in load_tasks(only, tmp_path)] == ["specqual__calc-1", "specqual__pager-1"]


def test_unknown_instance_is_an_error(local_set: Path) -> None:
    with pytest.raises(TaskError, match="nope__x-1"):
        load_tasks(workload(path=str(local_set), instances=["nope__x-1"]), Path("."))


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("FAIL_TO_PASS", "not json", "JSON-encoded"),
        ("FAIL_TO_PASS", "[]", "is empty"),
        ("PASS_TO_PASS", 7, "list of test ids"),
        ("base_commit", None, "missing"),
        ("repo", "", "non-empty string"),
    ],
)
def test_malformed_record_names_instance_and_field(local_set: Path, tmp_path: Path, field, value, message) -> None:
    records = rows(local_set)
    if value is None:
        del records[1][field]
    else:
        records[1][field] = value
    path = write_jsonl(tmp_path / "bad.jsonl", records)
    with pytest.raises(TaskError, match=message) as err:
        load_tasks(workload(dataset="x", path=str(path)), tmp_path)
    assert f"specqual__textkit-1.{field}" in str(err.value)
    assert str(path) in str(err.value)


def test_duplicate_and_unreadable_records(local_set: Path, tmp_path: Path) -> None:
    records = rows(local_set)
    dup = write_jsonl(tmp_path / "dup.jsonl", [*records, records[0]])
    with pytest.raises(TaskError, match="twice"):
        load_tasks(workload(dataset="x", path=str(dup)), tmp_path)
    broken = tmp_path / "broken.jsonl"
    broken.write_text(json.dumps(records[0]) + "\n{not json\n")
    with pytest.raises(TaskError, match="line 2"):
        load_tasks(workload(dataset="x", path=str(broken)), tmp_path)
    with pytest.raises(TaskError, match="no such file"):
        load_tasks(workload(dataset="x", path=str(tmp_path / "missing.jsonl")), tmp_path)


def test_local_dataset_is_generated_on_demand(tmp_path: Path) -> None:
    tasks = load_tasks(workload(path="sets/local"), tmp_path)
    assert (tmp_path / "sets" / "local" / "instances.jsonl").is_file()
    assert len(tasks) == 6
    assert Path(tasks[0].raw[REPO_PATH_KEY]).is_dir()
