"""Fixtures of the rollout integration tests: the local task set and a cohort file's SWE-bench block over it."""

from __future__ import annotations

from pathlib import Path

import pytest

from eval.tasks import local_set

# The agent of the real-vLLM rollouts (the reliability tests; the canary-cpu test's SWE-bench cohorts use the
# cohort file's own). docs/trust/facts.md: SmolLM2 calls tools with tool_choice "required" (4/5), and "strict"
# keeps the arguments valid.
AGENT = {
    "kind": "toolcall",
    "tool_choice": "required",
    "strict_tools": "true",
    "max_turns": 2,
    "max_tokens_per_reply": 64,
    "command_timeout_s": 20,
}


@pytest.fixture(scope="session")
def task_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("local-tasks")
    local_set.generate(directory)
    return directory


def swebench_overrides(task_dir: Path, **agent: object) -> list[str]:
    """`key.path=value` overrides that add a SWE-bench workload over the local set, bwrap, local grading."""
    out = [
        "workloads.swebench.dataset=specqual/local",
        f"workloads.swebench.path={task_dir}",
        "workloads.swebench.repeats=2",
        "workloads.swebench.concurrency=4",
        "workloads.swebench.sandbox.kind=bwrap",
        "workloads.swebench.sandbox.memory_gb=4",
        "workloads.swebench.grader.kind=local",
        "workloads.swebench.grader.workers=2",
    ]
    return out + [f"workloads.swebench.agent.{key}={value}" for key, value in agent.items()]
