"""The organism's table on the H200 (results/examples/organism-h200-*-20261204): what the docs claim, read back.

Made by scripts/gpu/qualify-on-node.sh with `--rollouts` (cohorts/organism-h200.yaml, docs/scale/gpu.md) and graded,
classified and reported here. Over NIXL prefill/decode on one H200, vLLM 0.26.0 as released with MTP 5 resolves
0/60 where MTP off resolves 59/60, and FAILs; the PR 55178 backport with MTP 5 resolves 59/60 and PASSes. On one
server, where 0.26.0 gives agent traffic no one-token tail, every cohort resolves 59/60.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[3]
EXAMPLES = REPO / "results" / "examples"
PD = EXAMPLES / "organism-h200-pd-20261204"
SINGLE = EXAMPLES / "organism-h200-single-20261204"
PATCHES = REPO / "cohorts" / "patches"
RELEASE_SHA256 = "adb1e4c9b46d0dfdb094121ae5aad670a42412dd813ed4e5db069ed6a15006de"


def read(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    assert data["schema_version"] == 1
    return data


def cohorts(run: Path) -> dict[str, Any]:
    return read(run / "summary.json")["cohorts"]  # type: ignore[no-any-return]


def test_over_pd_the_released_build_collapses_and_fails_and_the_backport_passes() -> None:
    c = cohorts(PD)
    assert {n: (s["resolved"], s["graded"], s["verdict"]) for n, s in c.items()} == {
        "released-off-pd1gpu": (59, 60, "PASS"),
        "released-mtp5-pd1gpu": (0, 60, "FAIL"),
        "backport-off-pd1gpu": (59, 60, "PASS"),
        "backport-mtp5-pd1gpu": (59, 60, "PASS"),
    }
    broken, fixed = c["released-mtp5-pd1gpu"], c["backport-mtp5-pd1gpu"]
    assert broken["resolved"] <= c["released-off-pd1gpu"]["resolved"] / 3  # issue 19: at most a third
    assert broken["corrupted_trajectories"] == 60
    assert broken["labels"]["leaked_tool_xml"] == 60 and broken["labels"]["missing_tool_call"] == 60
    assert "decided at instance 9 of 60" in broken["reason"]
    assert "non-inferior" in fixed["reason"] and "decided at instance 27 of 60" in fixed["reason"]
    assert fixed["acceptance"] >= 0.5 and broken["acceptance"] < 0.25  # over the rollouts (issue 19: >= 50%)


def test_the_canary_fails_the_released_build_on_padded_tails_only() -> None:
    probes = [read(p) for p in sorted((PD / "released-mtp5-pd1gpu" / "probes").glob("*.json"))]
    tails = [p for p in probes if p["mode"] == "prefix_hit_concurrent"]
    assert len(probes) == 12 and len(tails) == 8
    assert sum(p["diverged"] for p in tails) == 6
    assert not any(p["diverged"] for p in probes if p["mode"] == "fresh")  # nothing running beside it: no padding
    for cohort in ("backport-off-pd1gpu", "backport-mtp5-pd1gpu"):
        assert read(PD / cohort / "canary.json")["verdict"] == "clean"


def test_on_one_server_nothing_collapses() -> None:
    c = cohorts(SINGLE)
    assert {n: (s["resolved"], s["verdict"]) for n, s in c.items()} == {
        "released-off-single": (59, "PASS"),
        "released-mtp5-single": (59, "PASS"),
        "backport-off-single": (59, "PASS"),
        "backport-mtp5-single": (59, "PASS"),
    }
    assert c["released-mtp5-single"]["acceptance"] >= 0.5


def test_the_control_failure_is_the_organisms_own_loop_in_every_cohort() -> None:
    # One held-out instance defeats the organism itself: it repeats the edit until max_tokens. The classifier
    # labels that loop in the controls too, and the paired excess test does not charge it to MTP.
    unit = PD / "released-off-pd1gpu" / "units" / "specqual__willow30-tools-heldout43-1" / "r0"
    labels = read(unit / "labels.json")
    assert labels["corrupted"] and labels["labels"]["degenerate_repetition"] == 1
    assert read(unit / "grade.json")["status"] == "empty_patch"
    for run in (PD, SINGLE):
        for name, s in cohorts(run).items():
            if name != "released-mtp5-pd1gpu":
                assert s["corrupted_trajectories"] == 1 and s["labels"]["degenerate_repetition"] == 1


@pytest.mark.parametrize("run", [PD, SINGLE], ids=["pd", "single"])
def test_provenance_is_the_released_wheel_cuda_graphs_and_the_committed_backport(run: Path) -> None:
    for name in cohorts(run):
        stack = read(run / name / "stack.json")
        assert stack["vllm_version"] == "0.26.0" and stack["wheel_sha256"] == RELEASE_SHA256
        assert stack["gpus"] and stack["gpus"][0]["name"] == "NVIDIA H200"
        for patch in stack["patches"]:
            committed = PATCHES / Path(patch["file"]).name
            assert hashlib.sha256(committed.read_bytes()).hexdigest() == patch["sha256"]
        names = {Path(p["file"]).name for p in stack["patches"]}
        assert names == ({"pr55178-backport-v0.26.0.patch"} if name.startswith("backport") else set())
        servers = [c["argv"] for c in stack["commands"] if c["role"] != "router"]
        assert len(servers) == (2 if run == PD else 1)
        for argv in servers:
            assert "--enforce-eager" not in argv  # CUDA graphs on
            assert argv[argv.index("--dtype") + 1] == "float32"


def test_the_served_weights_are_the_cpu_trained_organism() -> None:
    record = json.loads((PD / "organism-training.json").read_text())  # the model directory's own record
    assert record["seed"] == 1
    assert record["training"]["pr55178_forecast"]["resolved_corrupted"] == 0.0  # the emulation forecast the collapse
    t = read(PD / "timings.json")
    assert t["rollout_acceptance"]["backport-mtp5-pd1gpu"]["acceptance_rate"] >= 0.5
    assert all(r["completed"] == 60 and r["infra_errors"] == 0 for r in t["rollouts"].values())


BF16 = EXAMPLES / "organism-h200-pd-bf16-20261204"


def test_at_bf16_the_mtp_off_controls_break_and_the_gate_ships_nothing() -> None:
    c = cohorts(BF16)
    assert {n: (s["resolved"], s["verdict"]) for n, s in c.items()} == {
        "released-off-pd1gpu": (0, "FAIL"),
        "released-mtp5-pd1gpu": (0, "FAIL"),
        "backport-off-pd1gpu": (0, "FAIL"),
        "backport-mtp5-pd1gpu": (59, "FAIL"),
    }
    for control in ("released-off-pd1gpu", "backport-off-pd1gpu"):
        assert c[control]["corrupted_trajectories"] >= 26 and "ceiling" in c[control]["reason"]
    assert "canary" in c["backport-mtp5-pd1gpu"]["reason"] and c["backport-mtp5-pd1gpu"]["acceptance"] >= 0.5
    stack = read(BF16 / "backport-mtp5-pd1gpu" / "stack.json")
    for command in stack["commands"]:
        if command["role"] != "router":
            argv = command["argv"]
            assert argv[argv.index("--dtype") + 1] == "bfloat16"
            assert argv[argv.index("--model") + 1].endswith("-bfloat16")  # config.json declares bfloat16


def test_at_bf16_the_control_calls_submit_at_once() -> None:
    units = sorted((BF16 / "released-off-pd1gpu" / "units").iterdir())
    assert units
    for unit in units:
        first = json.loads((unit / "r0" / "trajectory.jsonl").read_text().splitlines()[0])
        assert first["tool_calls"][0]["function"]["name"] == "submit"
        assert read(unit / "r0" / "grade.json")["status"] == "empty_patch"
