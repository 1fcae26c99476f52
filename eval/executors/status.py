"""What a run directory holds right now, per cohort: the stack's state, units done/failed/running, Slurm jobs.

Read-only. Units come from the unit directories (a parsing verdict.json is done; `status: infra_error` counts
as failed; a directory without a verdict is running, or was interrupted when nothing runs). Slurm job ids come
from `<cohort>/slurm.json`; their live state from `scontrol` when a controller answers, else as recorded.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from eval.executors.slurm import cluster
from eval.executors.slurm.record import jobs_of
from store.atomic import read_json_object
from store.layout import RUN_JSON, VERDICT
from store.record_io import read_record
from store.stack_records import SlurmJob, StackRecord
from store.unit_records import VerdictRecord


@dataclass
class JobStatus:
    kind: str
    job_id: str
    state: str
    live: bool  # from Slurm now (else as recorded)
    tasks: dict[str, int] = field(default_factory=dict)  # array: state -> number of tasks
    nodes: list[str] = field(default_factory=list)


@dataclass
class CohortStatus:
    name: str
    stack: str
    done: int = 0
    failed: int = 0
    running: int = 0
    jobs: list[JobStatus] = field(default_factory=list)

    def record(self) -> dict[str, Any]:
        return asdict(self)


def unit_counts(cohort_dir: Path) -> tuple[int, int, int]:
    """(done, failed, running) from `units/<instance>/r<k>/verdict.json`."""
    done = failed = running = 0
    for unit in sorted((cohort_dir / "units").glob("*/r*")):
        verdict = read_record(unit / VERDICT, VerdictRecord)
        if verdict is None:
            running += 1
        elif verdict.status == "infra_error":
            failed += 1
        else:
            done += 1
    return done, failed, running


def job_status(job: SlurmJob, ask_slurm: bool) -> JobStatus:
    job_id = job.job_id
    recorded = JobStatus(job.kind or "?", job_id, job.state or "?", False)
    recorded.tasks = _count(job.task_states or {})
    recorded.nodes = list(job.nodes or [])
    if not ask_slurm:
        return recorded
    try:
        infos = cluster.show_jobs(job_id)
    except cluster.SlurmError:
        return recorded
    if not infos:
        return recorded
    # Slurm forgets finished array tasks after MinJobAge: keep their recorded states.
    states = dict(job.task_states or {})
    states.update({str(i): info.state for info in infos for i in info.task_ids})
    nodes = sorted({n for info in infos for n in info.nodes})
    live = JobStatus(recorded.kind, job_id, infos[0].state, True, _count(states), nodes or recorded.nodes)
    if states:
        live.state = "ACTIVE" if any(info.active for info in infos) else "ENDED"
    return live


def _count(states: dict[str, str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for s in states.values():
        out[s] = out.get(s, 0) + 1
    return dict(sorted(out.items()))


def stack_state(cohort_dir: Path, jobs: list[JobStatus]) -> str:
    """The latest stack launch: its Slurm job's state, else from stack*.json (launched / stopped)."""
    stack_jobs = [j for j in jobs if j.kind == "stack"]
    if stack_jobs:
        last = stack_jobs[-1]
        return last.state.lower() + ("" if last.live else " (recorded)")
    records = sorted(cohort_dir.glob("stack*.json"), key=lambda p: p.stat().st_mtime)
    if not records:
        return "not launched"
    last_record = read_record(records[-1], StackRecord)
    return "stopped" if last_record is not None and last_record.stopped_at else "launched (not stopped)"


def run_status(run_dir: Path, ask_slurm: bool | None = None) -> list[CohortStatus]:
    """Status of every cohort of a run directory, in matrix order; raises FileNotFoundError without run.json."""
    meta = read_json_object(run_dir / RUN_JSON)  # only `cohorts` is needed: any run.json will do
    if meta is None:
        raise FileNotFoundError(f"{run_dir}: no readable run.json (not a specqual run directory)")
    names = list(meta.get("cohorts") or [])
    if ask_slurm is None:
        ask_slurm = any((run_dir / n / "slurm.json").is_file() for n in names) and cluster.cluster_answers(timeout_s=30)
    out = []
    for name in names:
        cdir = run_dir / name
        jobs = [job_status(j, ask_slurm) for j in jobs_of(cdir)]
        done, failed, running = unit_counts(cdir)
        out.append(CohortStatus(name, stack_state(cdir, jobs), done, failed, running, jobs))
    return out
