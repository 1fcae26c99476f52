"""`specqual plan`'s cost of a verdict: expected instances and GPU-hours per comparison (analysis plan-cost)."""

from __future__ import annotations

from pathlib import Path

from eval.executors import pick
from eval.plan import build_plan, comparison_cost
from eval.spec.load import load_spec

QUALIFICATION = Path(__file__).resolve().parents[3] / "cohorts" / "pr55178-qualification.yaml"


def test_the_seed_effect_costs_a_fraction_of_the_full_run() -> None:
    loaded = load_spec([str(QUALIFICATION)])
    plan = build_plan(loaded, pick(loaded))
    rows = {(r["cohort"], r["scenario"]): r for r in comparison_cost(loaded, plan, 0.3867, 0.35, 600.0)}
    seed = rows[("unpatched-mtp5", "seed effect")]
    assert seed["p_fail"] > 0.99 and seed["median_instances"] <= 40
    assert seed["gpu_hours"] < seed["gpu_hours_full"] / 10
    margin = rows[("patched-mtp5", "drop = margin")]
    assert (
        margin["p_pass"] < 0.1 and margin["median_instances"] == 500 and margin["gpu_hours"] == margin["gpu_hours_full"]
    )
    assert {r["scenario"] for r in rows.values()} == {"no effect", "drop = margin", "seed effect"}
