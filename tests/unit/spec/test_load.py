"""Cohort files that are valid: the real qualification files, overrides, extends, YAML 1.2 booleans."""

from __future__ import annotations

from pathlib import Path

import pytest

from eval.plan import build_plan
from eval.spec import SpecError, load_spec
from eval.spec.load import output_hash

REPO = Path(__file__).resolve().parents[3]
QUAL = str(REPO / "cohorts" / "pr55178-qualification.yaml")
QUAL_PD = str(REPO / "cohorts" / "pr55178-qualification-pd.yaml")


def test_motivating_matrix_has_four_cohorts_with_controls() -> None:
    loaded = load_spec([QUAL])
    names = [c.name for c in loaded.cohorts]
    assert names == ["unpatched-off", "unpatched-mtp5", "patched-off", "patched-mtp5"]
    by = {c.name: c for c in loaded.cohorts}
    assert by["unpatched-mtp5"].control == "unpatched-off"
    assert by["patched-mtp5"].control == "patched-off"
    assert by["unpatched-mtp5"].label == "Original regression"
    assert by["unpatched-mtp5"].speculative.vllm_config() == {"method": "mtp", "num_speculative_tokens": 5}
    assert by["unpatched-off"].speculative.vllm_config() is None


def test_plan_counts_units_gpus_and_commands() -> None:
    plan = build_plan(load_spec([QUAL]))
    assert plan["total_units"] == 4 * 500 * 3
    first = plan["cohorts"][1]
    assert first["units"] == 1500 and first["gpus"] == 4
    (cmd,) = first["commands"]
    assert "--speculative-config" in cmd and '{"method":"mtp","num_speculative_tokens":5}' in cmd
    assert "--tool-call-parser qwen3_coder" in cmd and "--enable-auto-tool-choice" in cmd


def test_pd_variant_prints_prefill_decode_and_router_commands() -> None:
    plan = build_plan(load_spec([QUAL_PD]))
    cohort = plan["cohorts"][1]
    roles = [c.split(" -m ")[0] for c in cohort["commands"]]
    assert len(cohort["commands"]) == 5 and cohort["gpus"] == 16
    assert sum("kv_role" in c for c in cohort["commands"]) == 4, roles
    assert cohort["commands"][-1].startswith("vllm-router")


def test_overrides_apply_in_order_and_change_the_hash(write_spec) -> None:
    path = str(write_spec())
    base = load_spec([path])
    changed = load_spec([path, "sampling.temperature=0.6", "sampling.temperature=0.7"])
    assert changed.spec.sampling.temperature == 0.7
    assert base.output_hash != changed.output_hash


def test_non_output_settings_keep_the_hash(write_spec) -> None:
    path = str(write_spec())
    base = load_spec([path])
    other = load_spec([path, "workloads.swebench.concurrency=99", "description=x", "policy.alpha=0.1"])
    assert output_hash(base.spec) == output_hash(other.spec)


def test_patch_contents_are_part_of_the_hash(write_spec, tmp_path: Path) -> None:
    path = str(write_spec())
    before = load_spec([path]).output_hash
    (tmp_path / "fix.patch").write_text("--- a/y\n+++ b/y\n")
    assert load_spec([path]).output_hash != before


def test_off_is_a_name_not_a_boolean(write_spec) -> None:
    loaded = load_spec([str(write_spec())])
    assert "off" in loaded.spec.speculative


def test_extends_merges_base_first(write_spec, tmp_path: Path) -> None:
    write_spec()
    child = tmp_path / "child.yaml"
    child.write_text("extends: c.yaml\nname: child\nsampling: {temperature: 0.5}\n")
    loaded = load_spec([str(child)])
    assert loaded.spec.name == "child" and loaded.spec.sampling.temperature == 0.5
    assert loaded.spec.model.path == "/models/m"


def test_custom_factor_sets_env_and_args(write_spec) -> None:
    def edit(d):
        d["factors"] = {
            "runner": {
                "column": "Model runner",
                "values": {
                    "v1": {"env": {"VLLM_USE_V2_MODEL_RUNNER": "0"}},
                    "v2": {"env": {"VLLM_USE_V2_MODEL_RUNNER": "1"}, "server_args": {"max_num_seqs": 8}},
                },
            }
        }
        d["matrix"] = {"product": {"build": ["unpatched"], "speculative": ["off", "mtp5"], "runner": ["v1", "v2"]}}
        d["comparisons"] = [{"cohort": "mtp5-v2", "control": "off-v2"}]

    loaded = load_spec([str(write_spec(edit))])
    by = {c.name: c for c in loaded.cohorts}
    assert set(by) == {"off-v1", "off-v2", "mtp5-v1", "mtp5-v2"}
    assert by["mtp5-v2"].env["VLLM_USE_V2_MODEL_RUNNER"] == "1"
    assert by["mtp5-v2"].server_args["max_num_seqs"] == 8


def test_explicit_cohort_list(write_spec) -> None:
    def edit(d):
        d["matrix"] = {
            "cohorts": [
                {"name": "ctrl", "build": "patched", "speculative": "off", "label": "MTP off"},
                {"name": "cand", "build": "patched", "speculative": "mtp5"},
            ]
        }
        d["comparisons"] = [{"cohort": "cand", "control": "ctrl"}]

    loaded = load_spec([str(write_spec(edit))])
    assert [c.name for c in loaded.cohorts] == ["ctrl", "cand"]
    assert loaded.cohorts[0].label == "MTP off"


def test_every_cohort_file_in_the_repo_is_valid() -> None:
    files = sorted((REPO / "cohorts").glob("*.yaml"))
    assert files
    for f in files:
        try:
            load_spec([str(f)])
        except SpecError as e:  # pragma: no cover - the message is the point
            pytest.fail(f"{f.name}: {e}")
