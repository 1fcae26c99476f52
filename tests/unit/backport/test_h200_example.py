"""The H200 example run (results/examples/h200-*): the 2x2 outcome and its provenance tie back to this checkout.

The run was made on an H200 by scripts/gpu/qualify-on-node.sh (see docs/scale/gpu.md). These tests read it: the
released 0.26.0 with MTP 5 diverges on the padded-tail probes, the backport and both MTP-off cohorts are clean,
and every stack ran the released wheel with the very patch files committed here.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[3]
RUN = REPO / "results" / "examples" / "h200-20261202-172438"
PATCHES = REPO / "cohorts" / "patches"
RELEASE_SHA256 = "adb1e4c9b46d0dfdb094121ae5aad670a42412dd813ed4e5db069ed6a15006de"
COHORTS = ("released-off", "released-mtp5", "backport-off", "backport-mtp5")


def read(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    assert data["schema_version"] == 1
    return data


def probes(cohort: str) -> list[dict[str, Any]]:
    return [read(p) for p in sorted((RUN / cohort / "probes").glob("*.json"))]


def test_released_mtp5_diverges_on_every_padded_tail_probe() -> None:
    targets = [p for p in probes("released-mtp5") if p["mode"] == "prefix_hit_concurrent" and p["role"] == "target"]
    assert len(targets) == 8
    assert all(p["cached_tokens"] == 128 and p["prompt_tokens"] == 129 for p in targets)
    assert all(p["diverged"] and p["first_divergence"] == 0 for p in targets)
    assert read(RUN / "released-mtp5" / "canary.json")["verdict"] == "corrupted"


@pytest.mark.parametrize("cohort", ["backport-mtp5", "backport-off"])
def test_backport_and_mtp_off_are_clean(cohort: str) -> None:
    recs = probes(cohort)
    assert len(recs) == 56
    assert all(p["diverged"] is False and p["infra_error"] is None for p in recs)
    assert read(RUN / cohort / "canary.json")["verdict"] == "clean"


def test_nothing_running_means_no_padding_in_0_26_0() -> None:
    # 0.26.0 pads a one-token tail only beside a running request: the prefix hit alone stays clean.
    alone = [p for p in probes("released-mtp5") if p["mode"] == "prefix_hit"]
    assert len(alone) == 8
    assert all(p["cached_tokens"] == 128 and p["diverged"] is False for p in alone)


@pytest.mark.parametrize("cohort", COHORTS)
def test_provenance_is_the_released_wheel_with_the_committed_patches(cohort: str) -> None:
    stack = read(RUN / cohort / "stack.json")
    assert stack["vllm_version"] == "0.26.0"
    assert stack["wheel_sha256"] == RELEASE_SHA256
    assert stack["gpus"] and stack["gpus"][0]["name"] == "NVIDIA H200" and stack["gpus"][0]["driver"]
    for patch in stack["patches"]:
        committed = PATCHES / Path(patch["file"]).name
        assert hashlib.sha256(committed.read_bytes()).hexdigest() == patch["sha256"]
    names = {Path(p["file"]).name for p in stack["patches"]}
    assert ("pr55178-backport-v0.26.0.patch" in names) == cohort.startswith("backport")
    assert "test-only-no-eagle-block-drop-v0.26.0.patch" in names
    args = stack["commands"][0]["argv"]
    assert "--enforce-eager" not in args  # CUDA graphs on
    assert stack["commands"][0]["env"]["SPECQUAL_NO_EAGLE_BLOCK_DROP"] == "1"  # the same for every cohort


def test_timings_record_starts_probing_and_acceptance() -> None:
    t = read(RUN / "timings.json")
    assert set(t["cold_start_s"]) == set(COHORTS) and set(t["warm_start_s"]) == set(COHORTS)
    assert t["probes"] == 128 and t["probes_per_min"] > 0
    assert t["acceptance"]["released-mtp5"]["draft_tokens"] > 0
