"""grade.json: the harness's decision for one unit (store.unit_records.GradeRecord), written atomically."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from eval.protocols import GradeResult
from store.layout import GRADE, SCHEMA_VERSION
from store.record_io import read_record, write_record
from store.unit_records import GRADE_STATUSES, GradeRecord

STATUSES = GRADE_STATUSES
GRADE_FILE = GRADE
LOG_DIR = "grade"  # per-unit harness logs: patch.diff, eval.sh, run_instance.log, test_output.txt, report.json


def grade_record(result: GradeResult, grader: str) -> GradeRecord:
    if result.status not in STATUSES:
        raise ValueError(f"unknown grade status {result.status!r}")
    return GradeRecord(
        grader=grader,
        status=result.status,  # checked against STATUSES above
        resolved=None if result.status == "infra_error" else bool(result.resolved),
        infra_reason=result.infra_reason,
        tests=result.tests,
        graded_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )


def write_grade(unit_dir: Path, result: GradeResult, grader: str) -> GradeRecord:
    record = grade_record(result, grader)
    write_record(Path(unit_dir) / GRADE_FILE, record)
    return record


def read_grade(unit_dir: Path) -> GradeRecord | None:
    record = read_record(Path(unit_dir) / GRADE_FILE, GradeRecord)
    return record if record is not None and record.schema_version == SCHEMA_VERSION else None
