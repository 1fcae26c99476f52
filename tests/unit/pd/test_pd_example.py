"""The P/D example runs on one H200 (results/examples/pd-h200-*), made by scripts/gpu/qualify-on-node.sh with
cohorts/pr55178-pd-h200.yaml (see docs/scale/gpu.md): the 2x2 outcome, the one-token tail the transfer left on every
decode worker, both workers of every cohort on the one GPU, and the prefix-caching variant's engine errors.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[3]
RUN = REPO / "results" / "examples" / "pd-h200-20261202-203936"
ALIGN = REPO / "results" / "examples" / "pd-h200-align-20261202-204728"
SINGLE = REPO / "results" / "examples" / "h200-20261202-172438"
COHORTS = ("released-off", "released-mtp5", "backport-off", "backport-mtp5")


def read(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def probes(run: Path, cohort: str) -> list[dict[str, Any]]:
    return [read(p) for p in sorted((run / cohort / "probes").glob("*.json"))]


def test_released_mtp5_diverges_beside_a_running_request_only() -> None:
    recs = probes(RUN, "released-mtp5")
    targets = [p for p in recs if p["mode"] == "prefix_hit_concurrent" and p["role"] == "target"]
    assert len(targets) == 8 and all(p["diverged"] and p["first_divergence"] == 0 for p in targets)
    assert all(p["overlapped"] for p in targets)
    assert not any(p["diverged"] for p in recs if p["mode"] == "fresh")  # same tail, nothing running: no padding
    assert read(RUN / "released-mtp5" / "canary.json")["verdict"] == "corrupted"


@pytest.mark.parametrize("cohort", ["backport-mtp5", "backport-off"])
def test_backport_and_mtp_off_are_clean(cohort: str) -> None:
    recs = probes(RUN, cohort)
    assert len(recs) == 24 and all(p["diverged"] is False and p["infra_error"] is None for p in recs)


@pytest.mark.parametrize("cohort", COHORTS)
def test_every_request_reached_the_decode_worker_with_one_token_to_compute(cohort: str) -> None:
    recs = probes(RUN, cohort)
    assert all(p["prompt_tokens"] - p["cached_tokens"] == 1 for p in recs)
    assert all(p["extra"]["tail_tokens"] == 1 for p in recs)


def test_both_workers_of_every_cohort_ran_on_the_one_gpu() -> None:
    placement = read(RUN / "placement.json")
    assert placement["gpus_used"] == 1
    workers = {(p["cohort"], p["worker"]) for p in placement["processes"]}
    assert workers == {(c, w) for c in COHORTS for w in ("prefill.0", "decode.0")}
    for c in COHORTS:
        stack = read(RUN / c / "stack.json")
        assert [cmd["role"] for cmd in stack["commands"]] == ["prefill", "decode", "router"]
        assert all("CUDA_VISIBLE_DEVICES" not in cmd["env"] for cmd in stack["commands"])


@pytest.mark.parametrize("cohort", ["released-off", "backport-off", "backport-mtp5"])
def test_clean_pd_outputs_equal_the_single_server_run(cohort: str) -> None:
    # Same prompts (same prompt book), same model: the transfer changed no token of a clean cohort.
    for rec in probes(RUN, cohort):
        single = read(SINGLE / cohort / "probes" / f"{rec['probe_id']}.json")
        assert single["prompt_token_ids"] == rec["prompt_token_ids"]
        assert single["output_token_ids"] == rec["output_token_ids"]


def test_prefix_caching_variant_dies_in_the_engine() -> None:
    mtp = (ALIGN / "released-mtp5" / "logs" / "decode.0.log").read_text()
    assert "AssertionError: SSM can only have one local block" in mtp
    off = (ALIGN / "released-off" / "logs" / "prefill.0.log").read_text()
    assert "assert num_new_tokens > 0" in off
    assert read(ALIGN / "released-off" / "smoke.json")["cached_tokens"] == 128
