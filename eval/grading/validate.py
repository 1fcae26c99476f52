"""Validate gold patches: grade each instance's gold patch and an empty patch N times; list the bad ones.

An instance is excluded (with its reason) when its gold patch does not resolve it in every run, when the
empty patch resolves it (its FAIL_TO_PASS tests pass without the fix), or when per-test results differ
between runs (flaky). The exclusion list is then applied to every cohort alike.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from eval.protocols import Grader, GradeResult, Task
from store.unit_records import GoldCheck


@dataclass
class InstanceCheck:
    instance_id: str
    gold: list[GradeResult] = field(default_factory=list)
    empty: list[GradeResult] = field(default_factory=list)

    def reasons(self) -> list[str]:
        out = []
        runs = len(self.gold)
        infra = [g.infra_reason for g in self.gold + self.empty if g.status == "infra_error"]
        if infra:
            out.append(f"infra during validation ({len(infra)} runs): {infra[0]}")
        bad = [g for g in self.gold if g.status not in ("resolved", "infra_error")]
        if bad:
            failing = _failing(bad[0])
            out.append(
                f"gold patch {bad[0].status} in {len(bad)}/{runs} runs" + (f"; failing: {failing}" if failing else "")
            )
        resolved_empty = sum(1 for g in self.empty if g.status == "resolved")
        if resolved_empty:
            out.append(f"empty patch resolves it in {resolved_empty}/{len(self.empty)} runs")
        for name, results in (("gold", self.gold), ("empty", self.empty)):
            if len({_signature(r) for r in results if r.status != "infra_error"}) > 1:
                out.append(f"flaky: {name}-patch test results differ between runs")
        return out

    def summary(self) -> GoldCheck:
        return GoldCheck(
            instance_id=self.instance_id,
            gold=[g.status for g in self.gold],
            empty=[g.status for g in self.empty],
            reasons=self.reasons(),
        )


def _failing(result: GradeResult) -> str:
    names = [t for key in ("FAIL_TO_PASS", "PASS_TO_PASS") for t in result.tests.get(key, {}).get("failure", [])]
    return ", ".join(names[:3]) + (f" (+{len(names) - 3})" if len(names) > 3 else "")


def _signature(result: GradeResult) -> str:
    return json.dumps([result.status, result.tests], sort_keys=True)


def validate(
    tasks: list[Task],
    gold_grader: Grader,
    empty_grader: Grader,
    runs: int,
    work: Path,
    workers: int = 2,
    progress: Callable[[InstanceCheck], None] | None = None,
) -> list[InstanceCheck]:
    """Grade gold and empty patches `runs` times each (logs under `work`); one check per task, in order."""
    checks = {t.instance_id: InstanceCheck(t.instance_id) for t in tasks}
    jobs = [(t, kind, k) for t in tasks for k in range(runs) for kind in ("gold", "empty")]

    def one(job: tuple[Task, str, int]) -> tuple[str, str, GradeResult]:
        task, kind, k = job
        grader, patch = (gold_grader, task.patch) if kind == "gold" else (empty_grader, "")
        try:
            result = grader.grade(task, patch, Path(work) / task.instance_id / f"{kind}-{k}")
        except Exception as e:  # a crash is an infra failure of validation, reported as such
            result = GradeResult("infra_error", None, infra_reason=f"grader crashed: {e}")
        return task.instance_id, kind, result

    with ThreadPoolExecutor(max_workers=workers) as pool:
        for instance_id, kind, result in pool.map(one, jobs):
            check = checks[instance_id]
            (check.gold if kind == "gold" else check.empty).append(result)
            if progress and len(check.gold) == runs and len(check.empty) == runs:
                progress(check)
    return list(checks.values())
