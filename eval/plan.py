"""The expanded plan of a cohort file: cohorts, units, GPUs and launch commands, without starting anything."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from eval.protocols import Executor
from eval.spec.load import LoadedSpec
from eval.spec.matrix import Cohort
from eval.stacks.commands import cohort_commands

# Sizes of public datasets, so a plan can count units offline.
KNOWN_DATASET_SIZES = {
    "SWE-bench/SWE-bench_Verified": 500,
    "princeton-nlp/SWE-bench_Verified": 500,
    "SWE-bench/SWE-bench_Lite": 300,
}


def model_path_for_plan(loaded: LoadedSpec, cohort: Cohort | None = None) -> str:
    """The cohort's model (default: the file's default model) as a path, or a placeholder for a generated one."""
    m = cohort.model if cohort is not None else loaded.spec.model
    if m.path is not None:
        return m.path
    assert m.generate is not None
    return f"<generated {m.generate.kind} seed={m.generate.seed}>"


def _count_local(path: Path) -> int | None:
    if path.is_dir():
        path = path / "instances.jsonl"
    if path.suffix == ".jsonl" and path.is_file():
        return sum(1 for line in path.read_text(encoding="utf-8").splitlines() if line.strip())
    return None


def swebench_instances(loaded: LoadedSpec) -> int | None:
    """How many instances a SWE-bench workload covers (None when it cannot be known offline)."""
    sw = loaded.spec.workloads.swebench
    if sw is None or not sw.enabled:
        return 0
    if sw.instances is not None:
        n: int | None = len(sw.instances)
    elif sw.expected_instances is not None:
        n = sw.expected_instances
    elif sw.path is not None:
        n = _count_local(loaded.spec.resolve(sw.path))
    elif sw.dataset == "specqual/local":
        from eval.tasks.local_set import default_dir

        n = _count_local(default_dir())  # known once the set is generated (cached)
    else:
        n = KNOWN_DATASET_SIZES.get(sw.dataset)
    if n is not None and sw.limit is not None:
        n = min(n, sw.limit)
    return n


def canary_probes(loaded: LoadedSpec, cohort: Cohort | None = None) -> int:
    c = loaded.spec.workloads.canary
    if c is None or not c.enabled or (cohort is not None and not cohort.runs("canary")):
        return 0
    return len(c.modes) * c.probes_per_mode


def cohort_plan(loaded: LoadedSpec, cohort: Cohort, executor: Executor) -> dict[str, Any]:
    sw = loaded.spec.workloads.swebench
    runs_swebench = cohort.runs("swebench")
    instances = swebench_instances(loaded) if runs_swebench else 0
    repeats = sw.repeats if sw is not None and runs_swebench else 0
    units = None if instances is None else instances * repeats
    model = model_path_for_plan(loaded, cohort)
    commands = cohort_commands(loaded.spec, cohort, model)
    return {
        "name": cohort.name,
        "label": cohort.label,
        "factors": cohort.factors,
        "factor_labels": cohort.factor_labels,
        "control": cohort.control,
        "model": cohort.model_name,
        "workloads": list(cohort.workloads),
        "instances": instances,
        "repeats": repeats,
        "units": units,
        "probes": canary_probes(loaded, cohort),
        "gpus": cohort.gpus if loaded.spec.server.device == "cuda" else 0,
        "commands": [p.shell() for p in commands],
        "sbatch": executor.scripts(cohort, model, instances),
    }


def build_plan(loaded: LoadedSpec, executor: Executor | None = None) -> dict[str, Any]:
    """The plan of every cohort; job scripts from `executor` (default: the one the cohort file names)."""
    if executor is None:
        from eval.executors import pick

        executor = pick(loaded)
    cohorts = [cohort_plan(loaded, c, executor) for c in loaded.cohorts]
    return {
        "name": loaded.spec.name,
        "spec_hash": loaded.output_hash,
        "executor": loaded.spec.executor.kind,
        "cohorts": cohorts,
        "total_units": None if any(c["units"] is None for c in cohorts) else sum(c["units"] for c in cohorts),
        "total_gpus": sum(c["gpus"] for c in cohorts),
    }


def comparison_cost(
    loaded: LoadedSpec, plan: dict[str, Any], rate: float, icc: float, unit_seconds: float
) -> list[dict[str, Any]]:
    """Expected instances and GPU-hours to a verdict per comparison, for no effect, a drop equal to the margin and
    the seed's effect, from the policy, a stated control rate and ICC, and a stated wall time per unit.

    The numbers come from `python -m analysis plan-cost` (a simulation of the sequential test; eval never
    imports analysis). GPU-hours of a cohort = units x unit_seconds / concurrency x the cohort's GPUs / 3600:
    units run `concurrency` at a time against one stack that holds its GPUs. Only the compared cohort stops
    early; its control runs every unit (counted once in the plan's totals).
    """
    import json
    import subprocess
    import sys

    sw = loaded.spec.workloads.swebench
    compared = [c for c in plan["cohorts"] if c["control"] and c["units"]]
    if sw is None or not compared:
        return []
    policy = loaded.spec.policy
    instances = max(c["instances"] for c in compared)
    cmd = [sys.executable, "-m", "analysis", "plan-cost", "--json", "--rate", str(rate), "--icc", str(icc)]
    cmd += ["--repeats", str(sw.repeats), "--margin", str(policy.non_inferiority_margin)]
    cmd += ["--alpha", str(policy.alpha), "--cap", str(instances), "--paths", "500"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=300)
    if out.returncode != 0:
        raise RuntimeError(f"python -m analysis plan-cost failed: {out.stderr.strip()[-400:]}")
    from store.decisions import PlanCost

    scenarios = {k: v.model_dump() for k, v in PlanCost.model_validate(json.loads(out.stdout)).scenarios.items()}
    rows = []
    for c in compared:
        hours_per_unit = unit_seconds / sw.concurrency * max(c["gpus"], 1) / 3600
        for name, s in scenarios.items():
            n = min(float(s["median_instances"]), c["instances"])
            rows.append({
                "cohort": c["name"], "control": c["control"], "scenario": name, "drop": s["drop"],
                "p_pass": s["p_pass"], "p_fail": s["p_fail"], "p_inconclusive": s["p_inconclusive"],
                "median_instances": n, "units": round(n * c["repeats"]),
                "gpu_hours": round(n * c["repeats"] * hours_per_unit, 1),
                "gpu_hours_full": round(c["units"] * hours_per_unit, 1),
            })  # fmt: skip
    return rows
