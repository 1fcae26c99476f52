"""`<run>/<cohort>/slurm.json`: the Slurm jobs of a cohort (stack jobs, rollout arrays), for status and resume.

One writer (the specqual process that submits), atomic rewrites; `specqual status` reads it and asks Slurm for
the live state of each job. The record is store.stack_records.SlurmJobs.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from store.layout import SCHEMA_VERSION
from store.record_io import read_record, write_record
from store.stack_records import SlurmJob, SlurmJobs

FILE_NAME = "slurm.json"


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def read_jobs(cohort_dir: Path) -> SlurmJobs:
    data = read_record(cohort_dir / FILE_NAME, SlurmJobs)
    if data is not None and data.schema_version == SCHEMA_VERSION:
        return data
    return SlurmJobs(cohort=cohort_dir.name)


def upsert_job(cohort_dir: Path, job_id: str, **fields: Any) -> SlurmJob:
    """Add a job (kind, script, ...) or update its fields (checked against SlurmJob); return the job's record."""
    data = read_jobs(cohort_dir)
    index = next((i for i, j in enumerate(data.jobs) if j.job_id == job_id), None)
    old = data.jobs[index].model_dump() if index is not None else {"job_id": job_id, "submitted_at": now()}
    job = SlurmJob.model_validate({**old, **fields, "updated_at": now()})
    if index is None:
        data.jobs.append(job)
    else:
        data.jobs[index] = job
    write_record(cohort_dir / FILE_NAME, data)
    return job


def jobs_of(cohort_dir: Path, kind: str | None = None) -> list[SlurmJob]:
    return [j for j in read_jobs(cohort_dir).jobs if kind is None or j.kind == kind]
