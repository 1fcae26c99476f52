"""Units of a cohort's rollout (instance x repeat), their per-unit seeds, and what is already done on disk.

A unit is done when its verdict parses and is not an infra error: a resumed run runs infra-error units again.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from eval.protocols import Task
from eval.spec.models import Sampling
from eval.store.run import RunDir
from store.layout import VERDICT
from store.order import ordered
from store.record_io import read_record
from store.unit_records import VerdictRecord


@dataclass(frozen=True)
class Unit:
    cohort: str
    task: Task
    repeat: int
    dir: Path

    @property
    def key(self) -> str:
        """A readable id for request ids and logs: `<cohort>/<instance_id>/r<k>`."""
        return f"{self.cohort}/{self.task.instance_id}/r{self.repeat}"


def unit_seed(sampling: Sampling, instance_id: str, repeat: int) -> int | None:
    """The request seed: none, the fixed seed, or (per_unit) a stable hash of (seed, instance, repeat).

    Stable across restarts and machines (sha256, not Python's salted `hash`), so a resumed unit samples the
    same way as it would have the first time, and every cohort gets the same seed for the same unit.
    """
    if sampling.seed_policy == "none":
        return None
    if sampling.seed_policy == "fixed":
        return sampling.seed
    digest = hashlib.sha256(f"{sampling.seed}\x00{instance_id}\x00{repeat}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def plan_units(
    run: RunDir, cohort: str, tasks: list[Task], repeats: int, instance_major: bool = False
) -> tuple[list[Unit], int]:
    """(units still to run, number already done). Repeat-major order by default: every instance once before any
    twice, so a partial run covers all instances evenly. `instance_major` (the early stop): every repeat of an
    instance before the next one, instances in the seeded order shared by every cohort (store.order), so
    complete instances accumulate from the front of that order."""
    todo: list[Unit] = []
    done = 0
    pairs = [(r, t) for r in range(repeats) for t in tasks]
    if instance_major:
        rank = {i: k for k, i in enumerate(ordered(t.instance_id for t in tasks))}
        pairs.sort(key=lambda rt: (rank[rt[1].instance_id], rt[0]))
    for repeat, task in pairs:
        if run.unit_done(cohort, task.instance_id, repeat) and not infra_failed(run, cohort, task.instance_id, repeat):
            done += 1
        else:
            todo.append(Unit(cohort, task, repeat, run.unit_dir(cohort, task.instance_id, repeat)))
    return todo, done


def infra_failed(run: RunDir, cohort: str, instance_id: str, repeat: int) -> bool:
    """The unit finished as an infra error (its verdict says so): a resumed run runs it again from scratch, so
    that an infrastructure fault (a killed server, worker or sandbox) is never kept as the unit's outcome."""
    verdict = read_record(run.unit_dir(cohort, instance_id, repeat) / VERDICT, VerdictRecord)
    return verdict is not None and verdict.status == "infra_error"


def infra_units(run: RunDir, cohort: str, tasks: list[Task], repeats: int) -> list[Unit]:
    """The units of `cohort` whose verdict is an infra error (see `infra_failed`)."""
    return [
        Unit(cohort, t, r, run.unit_dir(cohort, t.instance_id, r))
        for r in range(repeats)
        for t in tasks
        if infra_failed(run, cohort, t.instance_id, r)
    ]
