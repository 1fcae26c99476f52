"""`<run>/<cohort>/slurm.json`: the Slurm jobs of a cohort (stack jobs, rollout arrays), for status and resume.

One writer (the specqual process that submits), atomic rewrites; `specqual status` reads it and asks Slurm for
the live state of each job.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from eval.store.atomic import atomic_write_json, read_json

SCHEMA_VERSION = 1
FILE_NAME = "slurm.json"


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def read_record(cohort_dir: Path) -> dict[str, Any]:
    data = read_json(cohort_dir / FILE_NAME)
    if isinstance(data, dict) and data.get("schema_version") == SCHEMA_VERSION:
        return data
    return {"schema_version": SCHEMA_VERSION, "cohort": cohort_dir.name, "jobs": []}


def upsert_job(cohort_dir: Path, job_id: str, **fields: Any) -> dict[str, Any]:
    """Add a job (kind, script, ...) or update its fields; return the job's record."""
    data = read_record(cohort_dir)
    jobs: list[dict[str, Any]] = data["jobs"]
    job = next((j for j in jobs if j.get("job_id") == job_id), None)
    if job is None:
        job = {"job_id": job_id, "submitted_at": now()}
        jobs.append(job)
    job.update(fields)
    job["updated_at"] = now()
    atomic_write_json(cohort_dir / FILE_NAME, data)
    return job


def jobs_of(cohort_dir: Path, kind: str | None = None) -> list[dict[str, Any]]:
    jobs: list[dict[str, Any]] = read_record(cohort_dir)["jobs"]
    return [j for j in jobs if kind is None or j.get("kind") == kind]
