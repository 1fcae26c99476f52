"""The organism's table on the H200 (results/examples/organism-h200-*-20261204): what the docs claim, read back.

Made by scripts/gpu/qualify-on-node.sh with `--rollouts` (cohorts/organism-h200.yaml, docs/scale/gpu.md) and graded,
classified and reported here. Over NIXL prefill/decode on one H200, vLLM 0.26.0 as released with MTP 5 resolves
0/60 where MTP off resolves 59/60, and FAILs; the PR 55178 backport with MTP 5 resolves 59/60 and PASSes. On one
server, where 0.26.0 gives agent traffic no one-token tail, every cohort resolves 59/60. At bfloat16 over P/D the
committed run's "both MTP-off controls 0/60" did not reproduce on two fresh nodes: which cohorts break changes from
node to node (issue 31; docs/scale/gpu.md, "bfloat16 over P/D: not reproducible").
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
FRESH = [EXAMPLES / "organism-h200-pd-bf16-fresh1-2106", EXAMPLES / "organism-h200-pd-bf16-fresh2-2113"]
OFF = ("released-off-pd1gpu", "backport-off-pd1gpu")


def test_the_committed_bf16_run_is_one_draw_marked_not_reproduced() -> None:
    # What that run recorded (kept as it was): both MTP-off controls 0/60, backport MTP 5 59/60 ...
    c = cohorts(BF16)
    assert {n: c[n]["resolved"] for n in c} == {
        "released-off-pd1gpu": 0,
        "released-mtp5-pd1gpu": 0,
        "backport-off-pd1gpu": 0,
        "backport-mtp5-pd1gpu": 59,
    }
    stack = read(BF16 / "backport-mtp5-pd1gpu" / "stack.json")
    for command in stack["commands"]:
        if command["role"] != "router":
            argv = command["argv"]
            assert argv[argv.index("--dtype") + 1] == "bfloat16"
            assert argv[argv.index("--model") + 1].endswith("-bfloat16")  # config.json declares bfloat16
    # ... and its README no longer presents that as the MTP-off path's behaviour.
    assert "Not reproduced" in (BF16 / "README.md").read_text()


def test_on_fresh_nodes_the_bf16_pd_corruption_is_not_a_property_of_mtp_off() -> None:
    first, second = (cohorts(run) for run in FRESH)
    # Node 1: the two MTP-off cohorts (the same code, the same prompts) disagree: 59/60 against 0/60.
    assert (first[OFF[0]]["resolved"], first[OFF[1]]["resolved"]) == (59, 0)
    # Node 2: a different set breaks, the reference and backport MTP 5 (59/60 on node 1) included.
    assert second[OFF[0]]["resolved"] <= 5 and second["backport-mtp5-pd1gpu"]["resolved"] == 0
    assert first["backport-mtp5-pd1gpu"]["resolved"] == 59
    broken = [{n for n, s in run.items() if s["resolved"] < 30} for run in (first, second)]
    assert broken[0] != broken[1]
    # Even the canary's lone one-token tails differ between the MTP-off cohorts on node 1, from the first token.
    for k in range(4):
        a, b = (read(FRESH[0] / c / "probes" / f"fresh-{k:03d}-target.json") for c in OFF)
        assert a["output_token_ids"][0] != b["output_token_ids"][0]


@pytest.mark.parametrize("run", FRESH, ids=lambda p: p.name)
def test_fresh_bf16_runs_were_isolated_bf16_and_the_same_command(run: Path) -> None:
    assert read(run / "side-channels.json")["ok"] and read(run / "handshakes.json")["ok"]
    placement = read(run / "placement.json")
    assert placement["gpus_used"] == 1 and all(p["cohort"] for p in placement["processes"])
    assert len(placement["processes"]) == 8
    argv = read(run / "run.json")["argv"]
    assert "model.dtype=bfloat16" in argv and "--rollouts" in argv and "--no-warm" in argv
    assert (
        argv[argv.index("--cohorts") + 1]
        == "released-off-pd1gpu,released-mtp5-pd1gpu,backport-off-pd1gpu,backport-mtp5-pd1gpu"
    )
    for name in OFF:
        for command in read(run / name / "stack.json")["commands"]:
            if command["role"] != "router":
                assert command["argv"][command["argv"].index("--dtype") + 1] == "bfloat16"


ONEPAIR = EXAMPLES / "organism-h200-bf16-onepair-2135"


def test_one_bf16_pd_pair_alone_is_clean_and_token_identical_to_a_single_server() -> None:
    c = cohorts(ONEPAIR)
    assert {n: (s["resolved"], s["corrupted_trajectories"], s["verdict"]) for n, s in c.items()} == {
        "released-off-pd1gpu": (59, 0, "PASS"),
        "released-off-single": (59, 0, "PASS"),
    }
    pair = read(ONEPAIR / "released-off-pd1gpu" / "reply-token-ids.json")["replies"]
    single = read(ONEPAIR / "released-off-single" / "reply-token-ids.json")["replies"]
    node1 = read(FRESH[0] / "released-off-pd1gpu" / "reply-token-ids.json")["replies"]
    assert len(pair) == 60 and pair == single == node1
    assert read(ONEPAIR / "side-channels.json")["ok"] and read(ONEPAIR / "handshakes.json")["ok"]
    assert len(read(ONEPAIR / "placement.json")["processes"]) == 3  # one pair and the single server
