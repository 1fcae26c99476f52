"""The same scripted model replayed through the bwrap sandbox with the local grader, and through the docker
sandbox with the docker grader (`specqual rollout --grade`, overrides only): every unit ends the same way.

The scripted model (tests/doubles/scripted_model.py, a real HTTP server) stands in for a model that solves
tasks: it explores, runs the tests, edits (the gold patch on half of the tasks, a useless edit on the rest),
runs a command past its time limit (on one task), and submits.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from eval.agent.controls import apply_command
from eval.cli import app
from eval.protocols import Task
from tests.docker.conftest import leftover_containers
from tests.doubles.scripted_model import ScriptedModelServer, bash, problem_of, submit, turn_of

pytestmark = pytest.mark.docker
REPO = Path(__file__).resolve().parents[2]
COHORT = REPO / "cohorts" / "smollm2-cpu.yaml"
SOLVED = ("calc", "intervals", "stackq")


def replayer(tasks: list[Task]):
    def respond(request: dict[str, Any]) -> dict[str, Any]:
        task = next(t for t in tasks if t.problem_statement in problem_of(request))
        turn = turn_of(request)
        if turn == 0:
            explore = "git status --short; ls; python -m pytest -q tests"
            return {"content": "Looking around.", "tool_calls": [bash(explore)]}
        if turn == 1:
            solved = any(task.instance_id == f"specqual__{name}-1" for name in SOLVED)
            edit = apply_command(task.patch) if solved else "echo '# notes' >> README.md"
            return {"content": "Editing.", "tool_calls": [bash(edit)]}
        if turn == 2:  # one task runs a command past the 10 s limit (each one costs 10 s of the test's time)
            wait = "sleep 60; echo done" if task.instance_id == "specqual__calc-1" else "git diff --stat"
            return {"content": "Waiting.", "tool_calls": [bash(wait)]}
        return {"content": None, "tool_calls": [submit()]}

    return respond


def run(sandbox: str, grader: str, local_set: Path, base_url: str, results: Path) -> Path:
    overrides = [
        "workloads.swebench.dataset=specqual/local",
        f"workloads.swebench.path={local_set}",
        "workloads.swebench.repeats=1",
        "workloads.swebench.concurrency=2",
        f"workloads.swebench.sandbox.kind={sandbox}",
        "workloads.swebench.sandbox.memory_gb=2",
        f"workloads.swebench.grader.kind={grader}",
        "workloads.swebench.grader.workers=2",
        "workloads.swebench.agent.command_timeout_s=10",
    ]
    argv = ["rollout", str(COHORT), "--cohort", "stock-off", "--base-url", base_url, "--grade"]
    argv += [x for o in overrides for x in ("-c", o)] + ["--run-id", sandbox, "--results", str(results)]
    result = CliRunner().invoke(app, argv)
    assert result.exit_code == 0, result.output
    return results / sandbox / "stock-off"


def outcomes(cohort_dir: Path) -> dict[str, tuple[Any, ...]]:
    out = {}
    for unit in sorted(cohort_dir.glob("units/*/r*")):
        verdict = json.loads((unit / "verdict.json").read_text())
        grade = json.loads((unit / "grade.json").read_text())
        patch = (unit / "patch.diff").read_text()
        turns = [json.loads(line) for line in (unit / "trajectory.jsonl").read_text().splitlines()]
        ends = tuple(t["observation"].splitlines()[-1] for t in turns)  # "[exit code 0]", "[command timed out ...]"
        out[unit.parent.name] = (verdict["exit_reason"], verdict["infra_reason"], ends, patch, grade["status"])
    return out


def test_bwrap_and_docker_sandboxes_give_the_same_units(
    docker_client: Any, tasks: list[Task], local_set: Path, tmp_path: Path
) -> None:
    with ScriptedModelServer(replayer(tasks)) as server:
        in_bwrap = outcomes(run("bwrap", "local", local_set, server.base_url, tmp_path))
        in_docker = outcomes(run("docker", "docker", local_set, server.base_url, tmp_path))
    assert len(in_bwrap) == len(tasks) == 6
    assert in_docker == in_bwrap
    assert in_docker["specqual__calc-1"][2][2] == "[command timed out after 10 s]"
    statuses = sorted(o[4] for o in in_docker.values())
    assert statuses == ["resolved"] * 3 + ["unresolved"] * 3
    assert leftover_containers(docker_client) == []  # every sandbox and grading container removed
