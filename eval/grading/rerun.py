"""Re-grade a saved run from its patches (`specqual grade RUN_DIR`): no model, no GPU, no rollout."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from eval.grading.factory import make_grader
from eval.grading.stream import GradeQueue
from eval.protocols import Task
from eval.spec.errors import SpecError
from eval.spec.models import CohortFile, SWEBenchWorkload
from eval.store.run import RunDir, safe_name
from eval.tasks.load import load_tasks
from store.record_io import read_record
from store.unit_records import VerdictRecord


@dataclass(frozen=True)
class UnitRef:
    cohort: str
    instance_id: str
    repeat: int
    path: Path


def find_units(run: Path, cohorts: list[str]) -> list[UnitRef]:
    """Every unit with a verdict, in cohort then directory order."""
    units = []
    for cohort in cohorts:
        for verdict_path in sorted((Path(run) / safe_name(cohort) / "units").glob("*/r*/verdict.json")):
            verdict = read_record(verdict_path, VerdictRecord)
            if verdict is None:
                continue
            units.append(UnitRef(cohort, verdict.instance_id, verdict.repeat, verdict_path.parent))
    return units


def run_workload(run: Path) -> tuple[SWEBenchWorkload, Path, list[str]]:
    meta = RunDir(Path(run)).meta()
    spec = CohortFile.model_validate(meta["spec"])
    workload = spec.workloads.swebench
    if workload is None:
        raise SpecError("workloads.swebench", "the run has no SWE-bench workload to grade", str(run))
    return workload, Path(meta.get("base_dir", ".")), list(meta.get("cohorts", []))


def all_tasks(workload: SWEBenchWorkload, base_dir: Path) -> dict[str, Task]:
    """Every task of the dataset (no selection): a saved unit is graded even if the selection changed since."""
    everything = workload.model_copy(update={"instances": None, "filter": None, "exclude": None, "limit": None})
    return {t.instance_id: t for t in load_tasks(everything, base_dir)}


def grade_run(run: Path, regrade: bool = False, workers: int | None = None) -> Counter[str]:
    """Grade every unit with a verdict and no grade (all with `regrade`); count the statuses written."""
    workload, base_dir, cohorts = run_workload(run)
    units = find_units(run, cohorts)
    tasks = all_tasks(workload, base_dir)
    unknown = sorted({u.instance_id for u in units} - set(tasks))
    if unknown:
        raise SpecError("instance_id", f"units of instances not in the dataset: {', '.join(unknown[:5])}", str(run))
    grader = make_grader(workload.grader, log_root=Path(run) / "harness-logs")
    counts: Counter[str] = Counter()
    with GradeQueue(grader, workload.grader.kind, workers or workload.grader.workers, regrade) as queue:
        futures = [queue.submit(tasks[u.instance_id], u.path) for u in units]
    for future in futures:
        result = future.result()
        counts[result.status if result is not None else "skipped"] += 1
    return counts
