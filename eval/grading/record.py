"""grade.json: the harness's decision for one unit (see results/README.md), written atomically."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from eval.protocols import GradeResult
from eval.store.atomic import atomic_write_json, read_json

SCHEMA_VERSION = 1
STATUSES = ("resolved", "unresolved", "empty_patch", "patch_failed", "infra_error")
GRADE_FILE = "grade.json"
LOG_DIR = "grade"  # per-unit harness logs: patch.diff, eval.sh, run_instance.log, test_output.txt, report.json


def grade_record(result: GradeResult, grader: str) -> dict[str, Any]:
    if result.status not in STATUSES:
        raise ValueError(f"unknown grade status {result.status!r}")
    return {
        "schema_version": SCHEMA_VERSION,
        "grader": grader,
        "status": result.status,
        "resolved": None if result.status == "infra_error" else bool(result.resolved),
        "infra_reason": result.infra_reason,
        "tests": result.tests,
        "graded_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }


def write_grade(unit_dir: Path, result: GradeResult, grader: str) -> dict[str, Any]:
    record = grade_record(result, grader)
    atomic_write_json(Path(unit_dir) / GRADE_FILE, record)
    return record


def read_grade(unit_dir: Path) -> dict[str, Any] | None:
    data = read_json(Path(unit_dir) / GRADE_FILE)
    return data if isinstance(data, dict) and data.get("schema_version") == SCHEMA_VERSION else None
