"""Per-cohort models (`models:` + `matrix.cohorts[].model`) and workloads (`matrix.cohorts[].workloads`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from eval.plan import build_plan
from eval.spec.load import load_spec

REPO = Path(__file__).resolve().parents[3]


def two_models(d: dict[str, Any]) -> None:
    """The demo's shape: a canary cohort pair on the default model, a SWE-bench pair on another model."""
    d["models"] = {"small": {"path": "/models/small", "served_name": "small", "tool_call_parser": "hermes"}}
    d["workloads"]["canary"] = {"probes_per_mode": 2}
    d["matrix"] = {
        "cohorts": [
            {"name": "c-off", "build": "patched", "speculative": "off", "workloads": ["canary"]},
            {"name": "c-mtp", "build": "patched", "speculative": "mtp5", "workloads": ["canary"]},
            {"name": "s-off", "build": "patched", "speculative": "off", "model": "small", "workloads": ["swebench"]},
            {"name": "s-mtp", "build": "patched", "speculative": "mtp5", "model": "small", "workloads": ["swebench"]},
        ]
    }
    d["comparisons"] = [{"cohort": "c-mtp", "control": "c-off"}, {"cohort": "s-mtp", "control": "s-off"}]


def test_each_cohort_has_its_model_and_workloads(write_spec) -> None:
    loaded = load_spec([str(write_spec(two_models))])
    by = {c.name: c for c in loaded.cohorts}
    assert (by["c-off"].model_name, by["c-off"].model.path, by["c-off"].workloads) == (
        "default",
        "/models/m",
        ("canary",),
    )
    assert (by["s-mtp"].model_name, by["s-mtp"].model.served_name) == ("small", "small")
    assert by["s-mtp"].runs("swebench") and not by["s-mtp"].runs("canary")


def test_plan_counts_units_and_probes_per_cohort(write_spec) -> None:
    def edit(d: dict[str, Any]) -> None:
        two_models(d)
        d["workloads"]["swebench"].update(instances=["a", "b"])
        # the hand-written modes, counted per probe (the default, fuzz, runs by time budget: one "probe" per mode)
        d["workloads"]["canary"]["modes"] = ["prefix_hit", "prefix_hit_concurrent", "fresh"]

    path = write_spec(edit)
    plan = build_plan(load_spec([str(path)]))
    by = {c["name"]: c for c in plan["cohorts"]}
    assert (by["c-off"]["units"], by["c-off"]["probes"], by["c-off"]["model"]) == (0, 6, "default")
    assert (by["s-off"]["units"], by["s-off"]["probes"], by["s-off"]["model"]) == (6, 0, "small")
    assert by["s-off"]["workloads"] == ["swebench"] and plan["total_units"] == 12
    assert "--model /models/small --served-model-name small" in by["s-off"]["commands"][0]


def test_model_may_differ_when_declared(write_spec) -> None:
    def edit(d: dict[str, Any]) -> None:
        two_models(d)
        d["comparisons"] = [{"cohort": "s-off", "control": "c-off", "differs_in": ["model"]}]
        d["matrix"]["cohorts"][0]["workloads"] = ["canary", "swebench"]

    loaded = load_spec([str(write_spec(edit))])
    assert {c.name: c.control for c in loaded.cohorts}["s-off"] == "c-off"


def listed(**extra: Any) -> Callable[[dict[str, Any]], None]:
    def edit(d: dict[str, Any]) -> None:
        d["matrix"] = {"cohorts": [{"build": "patched", "speculative": "off", **extra}]}
        d["comparisons"] = []

    return edit


def test_without_the_new_keys_the_hash_is_unchanged(write_spec) -> None:
    plain = load_spec([str(write_spec())]).output_hash
    explicit = load_spec([str(write_spec(lambda d: d.update(models={}), name="explicit.yaml"))]).output_hash
    assert plain == explicit
    bare = load_spec([str(write_spec(listed(), name="bare.yaml"))]).output_hash
    nulls = load_spec([str(write_spec(listed(model=None, workloads=None), name="nulls.yaml"))]).output_hash
    assert bare == nulls


def test_a_disabled_workload_is_off_for_every_cohort() -> None:
    loaded = load_spec([str(REPO / "cohorts" / "canary-cpu.yaml"), "workloads.canary.enabled=false"])
    assert [c.name for c in loaded.cohorts if c.workloads] == ["smollm2-off", "smollm2-ngram"]
