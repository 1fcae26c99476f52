"""Turn one SWE-bench dataset record into a `Task`, refusing a malformed record with an error naming it."""

from __future__ import annotations

import json
from typing import Any

from eval.protocols import Task
from eval.spec.errors import SpecError

REQUIRED_TEXT = ("instance_id", "repo", "base_commit", "problem_statement", "patch", "test_patch")
TEST_LISTS = ("FAIL_TO_PASS", "PASS_TO_PASS")
# Key under which the loader records where a local instance's git repository is (not part of the dataset).
REPO_PATH_KEY = "specqual_repo_path"


class TaskError(SpecError):
    """A dataset record is malformed; the field is `<instance_id>.<field>`."""


def plain(value: Any) -> Any:
    """numpy/pyarrow values (from parquet) as plain Python values."""
    if hasattr(value, "tolist"):
        return value.tolist()
    return value


def test_list(record: dict[str, Any], key: str, where: str, source: str) -> list[str]:
    """A FAIL_TO_PASS / PASS_TO_PASS value: a JSON-encoded list of strings (as in the dataset) or a list."""
    value = plain(record.get(key))
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            raise TaskError(f"{where}.{key}", "not a JSON-encoded list of test ids", source) from None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TaskError(f"{where}.{key}", f"expected a list of test ids, got {type(value).__name__}", source)
    return value


def to_task(record: dict[str, Any], source: str, index: int) -> Task:
    record = {k: plain(v) for k, v in record.items()}
    instance_id = record.get("instance_id")
    where = instance_id if isinstance(instance_id, str) and instance_id else f"record {index}"
    for key in REQUIRED_TEXT:
        value = record.get(key)
        if not isinstance(value, str) or (key != "problem_statement" and key != "patch" and not value):
            got = "missing" if value is None else f"{type(value).__name__} {str(value)[:40]!r}"
            raise TaskError(f"{where}.{key}", f"expected a non-empty string, got {got}", source)
    fail_to_pass = test_list(record, "FAIL_TO_PASS", where, source)
    pass_to_pass = test_list(record, "PASS_TO_PASS", where, source)
    if not fail_to_pass:
        raise TaskError(f"{where}.FAIL_TO_PASS", "is empty: nothing decides whether a patch resolves it", source)
    return Task(
        instance_id=record["instance_id"],
        repo=record["repo"],
        base_commit=record["base_commit"],
        problem_statement=record["problem_statement"],
        patch=record["patch"],
        test_patch=record["test_patch"],
        fail_to_pass=fail_to_pass,
        pass_to_pass=pass_to_pass,
        version=str(record.get("version") or ""),
        raw=record,
    )
