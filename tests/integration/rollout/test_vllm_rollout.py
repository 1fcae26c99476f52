"""End to end on a real vLLM CPU server serving SmolLM2-135M-Instruct (hermes tool calls): the tool-call agent
runs the local task set in bwrap sandboxes, 2 repeats, speculative decoding off and ngram, graded locally, with
every raw response captured (content, tool calls as returned, finish reason, usage, token ids, request id)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from eval.grading.factory import make_grader
from eval.grading.stream import GradeQueue
from eval.rollout.run import grade_when_done, run_rollouts
from eval.spec.load import load_spec
from eval.stacks import ensure_build, launch
from eval.stacks.models import model_dir
from eval.store.run import open_run
from eval.tasks.load import load_tasks
from tests.integration.rollout.conftest import swebench_overrides

REPO = Path(__file__).resolve().parents[3]
COHORT = REPO / "cohorts" / "smollm2-cpu.yaml"
# docs/trust/facts.md: SmolLM2 calls tools with tool_choice "required" (4/5), and "strict" keeps the arguments valid
AGENT = {
    "kind": "toolcall",
    "tool_choice": "required",
    "strict_tools": "true",
    "max_turns": 2,
    "max_tokens_per_reply": 64,
    "command_timeout_s": 20,
}


def check_cohort(cohort_dir: Path, base_url: str) -> int:
    """Every unit done and completed, every response raw and whole; returns the number of tool calls seen."""
    verdicts = [json.loads(p.read_text()) for p in cohort_dir.glob("units/*/r*/verdict.json")]
    assert len(verdicts) == 12
    assert {v["status"] for v in verdicts} == {"completed"}, [v["infra_reason"] for v in verdicts]
    calls = 0
    for trajectory in cohort_dir.glob("units/*/r*/trajectory.jsonl"):
        for line in map(json.loads, trajectory.read_text().splitlines()):
            assert line["error"] is None and line["server"] == base_url
            assert line["request_id"] and line["latency_s"] > 0
            assert line["finish_reason"] in ("tool_calls", "stop", "length")
            assert line["usage"]["completion_tokens"] == len(line["token_ids"]) > 0
            assert line["usage"]["prompt_tokens"] == len(line["prompt_token_ids"]) > 0
            for call in line["tool_calls"] or []:
                assert isinstance(call["function"]["arguments"], str)  # as returned, never parsed
                calls += 1
    assert len((cohort_dir / "predictions.jsonl").read_text().splitlines()) == 12
    assert len(list(cohort_dir.glob("units/*/r*/grade.json"))) == 12
    return calls


@pytest.mark.vllm
@pytest.mark.timeout(2400)
def test_tool_call_agent_on_vllm_cpu_smollm2_spec_off_and_ngram(task_dir, tmp_path):
    overrides = swebench_overrides(task_dir, **AGENT)
    loaded = load_spec([str(COHORT), *overrides])
    workload = loaded.spec.workloads.swebench
    assert workload is not None
    tasks = load_tasks(workload, loaded.spec.base_dir)
    run = open_run(loaded, tmp_path, "vllm")
    build = ensure_build(loaded.spec, "stock")
    model = model_dir(loaded.spec)
    grader = make_grader(workload.grader)
    calls = {}
    for cohort in ("stock-off", "stock-ngram"):
        with (
            launch(loaded.spec, loaded.cohort(cohort), model, run.path, build) as stack,
            GradeQueue(grader, "local", 2) as queue,
        ):
            done = grade_when_done(queue.submit, tasks)
            summary = asyncio.run(run_rollouts(loaded, run, cohort, stack.base_url, tasks, on_unit_done=done))
            assert summary.infra_errors == 0 and summary.completed == 12
            base_url = stack.base_url
        calls[cohort] = check_cohort(run.cohort_dir(cohort), base_url)
    assert calls["stock-off"] > 0 and calls["stock-ngram"] > 0
