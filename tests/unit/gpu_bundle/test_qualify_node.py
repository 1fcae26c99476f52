"""scripts/gpu/qualify_node.py: the parts that need no GPU (cohort selection, acceptance per workload)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "scripts" / "gpu"))

import qualify_node  # noqa: E402

COHORT_FILE = REPO / "cohorts" / "organism-h200.yaml"


def args(*extra: str) -> object:
    return qualify_node.parse_args(["--results", "/nonexistent", "--cohort-file", str(COHORT_FILE), *extra])


def test_cohorts_selects_a_subset_in_file_order() -> None:
    loaded = qualify_node.load(args("--cohorts", "backport-mtp5-pd1gpu, released-off-pd1gpu"))
    assert [c.name for c in loaded.cohorts] == ["released-off-pd1gpu", "backport-mtp5-pd1gpu"]
    assert len(qualify_node.load(args()).cohorts) == 8


def test_an_unknown_cohort_is_refused_with_the_names_there_are() -> None:
    with pytest.raises(SystemExit) as e:
        qualify_node.load(args("--cohorts", "released-off-pd1gpu,released-mtp5"))
    assert "no cohort released-mtp5 " in str(e.value)
    assert "released-mtp5-pd1gpu" in str(e.value)


def test_acceptance_is_counted_per_workload(tmp_path: Path) -> None:
    def snap(phase: str, workload: str, drafts: int, draft_tokens: int, accepted: int) -> str:
        counters = {
            "spec_decode_num_drafts": drafts,
            "spec_decode_num_draft_tokens": draft_tokens,
            "spec_decode_num_accepted_tokens": accepted,
        }
        return json.dumps({"schema_version": 1, "phase": phase, "workload": workload, **counters})

    path = tmp_path / "metrics.jsonl"
    lines = [
        snap("before", "canary", 0, 0, 0),
        snap("after", "canary", 10, 50, 5),
        snap("before", "swebench", 10, 50, 5),
        snap("periodic", "swebench", 60, 300, 200),
        snap("after", "swebench", 110, 550, 405),
    ]
    path.write_text("\n".join(lines) + "\n")
    canary = qualify_node.acceptance(path)
    assert canary.acceptance_rate == 0.1
    rollouts = qualify_node.acceptance(path, "swebench")
    assert (rollouts.drafts, rollouts.draft_tokens, rollouts.accepted_tokens) == (100, 500, 400)
    assert rollouts.acceptance_rate == 0.8
    assert rollouts.mean_acceptance_length == 5.0


def test_a_selection_without_the_canary_reference_is_refused_before_anything_starts() -> None:
    with pytest.raises(SystemExit) as e:
        qualify_node.load(args("--cohorts", "released-off-single,released-mtp5-single"))
    assert "released-off-pd1gpu" in str(e.value)
    picked = qualify_node.load(
        args(
            "--cohorts",
            "released-off-single,released-mtp5-single",
            "-c",
            "workloads.canary.reference=released-off-single",
        )
    )
    assert [c.name for c in picked.cohorts] == ["released-off-single", "released-mtp5-single"]
