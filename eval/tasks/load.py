"""Load the SWE-bench tasks of a workload: hub dataset, local parquet/JSONL copy, or a local task set.

`load_tasks(workload, base_dir)` applies, in this order and identically for every cohort: the explicit
`instances` list, the `filter` regular expression, the exclusion list, then `limit` (the first N in dataset
order). The hub is contacted only for a hub name with no `path` (never in tests).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from eval.protocols import Task
from eval.spec.models import SWEBenchWorkload
from eval.tasks import exclusions, generated, local_set
from eval.tasks.records import REPO_PATH_KEY, TaskError, to_task


def resolve_path(workload: SWEBenchWorkload, base_dir: Path) -> Path | None:
    """The local source of the tasks, or None for a hub dataset."""
    if workload.path is not None:
        path = Path(workload.path).expanduser()
        return path if path.is_absolute() else Path(base_dir) / path
    if workload.dataset == local_set.LOCAL_DATASET:
        return local_set.default_dir()
    if workload.dataset == generated.DATASET:
        return generated.default_dir(_generated_split(workload))
    return None


def _generated_split(workload: SWEBenchWorkload) -> str:
    if workload.split not in generated.SPLITS:
        known = ", ".join(generated.SPLITS)
        raise TaskError("split", f"{generated.DATASET} has the splits {known}, not {workload.split!r}", "")
    return workload.split


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    records = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as e:
            raise TaskError(f"line {number}", f"not JSON: {e}", str(path)) from None
        if not isinstance(record, dict):
            raise TaskError(f"line {number}", "not a JSON object", str(path))
        records.append(record)
    return records


def read_file(path: Path) -> list[dict[str, Any]]:
    if path.suffix == ".jsonl":
        return read_jsonl(path)
    if path.suffix == ".json":
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, list):
            raise TaskError("dataset", "a .json dataset must hold a list of records", str(path))
        return data
    if path.suffix == ".parquet":
        import pandas as pd

        return pd.read_parquet(path).to_dict("records")
    raise TaskError("path", "expected a .jsonl, .json or .parquet file or a local task set directory", str(path))


def read_records(workload: SWEBenchWorkload, path: Path | None) -> tuple[list[dict[str, Any]], str]:
    """The raw records and a description of where they came from."""
    if path is None:
        from datasets import load_dataset  # only when a run really asks for the hub dataset

        rows = load_dataset(workload.dataset, split=workload.split)
        return [dict(r) for r in rows], f"{workload.dataset}[{workload.split}]"
    if workload.dataset == local_set.LOCAL_DATASET and (path.is_dir() or not path.exists()):
        local_set.ensure(path)  # generated on demand, cached by generator version
    if workload.dataset == generated.DATASET and (path.is_dir() or not path.exists()):
        split = _generated_split(workload)
        generated.ensure(path, split, max(workload.limit or 0, generated.DEFAULT_COUNT[split]))
    if path.is_dir():
        for candidate in (
            path / "instances.jsonl",
            path / f"{workload.split}.parquet",
            path / f"{workload.split}.jsonl",
        ):
            if candidate.is_file():
                return read_file(candidate), str(candidate)
        raise TaskError("path", "directory holds no instances.jsonl or <split>.parquet/.jsonl", str(path))
    if not path.is_file():
        raise TaskError("path", "no such file or directory", str(path))
    return read_file(path), str(path)


def select(tasks: list[Task], workload: SWEBenchWorkload, excluded: Iterable[str], source: str) -> list[Task]:
    if workload.instances is not None:
        known = {t.instance_id for t in tasks}
        missing = [i for i in workload.instances if i not in known]
        if missing:
            raise TaskError("instances", f"not in the dataset: {', '.join(missing[:5])}", source)
        wanted = set(workload.instances)
        tasks = [t for t in tasks if t.instance_id in wanted]
    if workload.filter is not None:
        pattern = re.compile(workload.filter)
        tasks = [t for t in tasks if pattern.search(t.instance_id)]
    skip = set(excluded)
    tasks = [t for t in tasks if t.instance_id not in skip]
    return tasks[: workload.limit] if workload.limit is not None else tasks


def load_tasks(workload: SWEBenchWorkload, base_dir: Path) -> list[Task]:
    """Every selected task of the workload, in dataset order."""
    path = resolve_path(workload, base_dir)
    records, source = read_records(workload, path)
    tasks = [to_task(r, source, i) for i, r in enumerate(records)]
    seen: set[str] = set()
    for t in tasks:
        if t.instance_id in seen:
            raise TaskError(f"{t.instance_id}.instance_id", "appears twice in the dataset", source)
        seen.add(t.instance_id)
    if path is not None and local_set.is_local_set(path):
        for t in tasks:
            t.raw[REPO_PATH_KEY] = str(local_set.repo_path(t.raw, path))
    excluded = load_exclusions(workload, base_dir)
    return select(tasks, workload, excluded.reasons if excluded else {}, source)


def load_exclusions(workload: SWEBenchWorkload, base_dir: Path) -> exclusions.ExclusionList | None:
    if workload.exclude is None:
        return None
    path = Path(workload.exclude).expanduser()
    return exclusions.read(path if path.is_absolute() else Path(base_dir) / path)
