"""The local launcher's readiness, failure, provenance and teardown paths, against a stub vLLM server.

The stub (a test double defined in conftest.py) answers /health, /v1/models and /metrics and starts a child
process; the real vLLM server runs in tests/integration/stacks.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from eval.spec.load import load_spec
from eval.spec.matrix import Cohort, expand
from eval.spec.models import CohortFile
from eval.stacks import ensure_build, launch
from eval.stacks.local import StackError
from eval.stacks.metrics import MetricsRecorder
from eval.stacks.process import ManagedProcess, group_members, processes_with_env


def _spec(tmp_path: Path, env: Path, cohort_yaml: Callable[..., Path], *overrides: str) -> CohortFile:
    return load_spec([str(cohort_yaml(tmp_path, env)), *overrides]).spec


def cohort(spec: CohortFile, name: str) -> Cohort:
    return next(c for c in expand(spec) if c.name == name)


def test_stack_starts_reports_and_leaves_nothing(
    tmp_path: Path, fake_env: Path, cohort_yaml: Callable[..., Path]
) -> None:
    spec = _spec(tmp_path, fake_env, cohort_yaml)
    build = ensure_build(spec, "reverted", cache=tmp_path / "cache")
    run = tmp_path / "run"
    with launch(spec, cohort(spec, "reverted-off"), "/models/none", run, build, startup_timeout_s=60) as stack:
        assert httpx.get(stack.base_url + "/v1/models").json()["data"][0]["id"] == "m"
        snap = MetricsRecorder(stack.metrics_urls, run / "reverted-off" / "metrics.jsonl").snapshot("before", "canary")
        assert snap["generation_tokens"] == 5 and snap["spec_decode_num_drafts"] is None
        marker = stack.marker
        assert len(processes_with_env(marker)) == 2  # the server and its child
        cmd = stack.command_lines()[0]
        assert f"PYTHONPATH={build.overlay}" in cmd and "VLLM_TARGET_DEVICE=cpu" in cmd
    assert processes_with_env(marker) == []
    record = json.loads((run / "reverted-off" / "stack.json").read_text())
    assert record["schema_version"] == 1 and record["stopped_at"] is not None
    assert record["vllm_path"] == str(build.vllm_path)
    assert record["patched_files"] == build.patched_files and record["patches"][0]["reverse"] is True
    assert record["commands"][0]["log"] == str(run / "reverted-off" / "logs" / "server.0.log")
    assert (run / "reverted-off" / "logs" / "server.0.log").is_file()
    assert (run / "reverted-off" / "metrics.jsonl").is_file()


def test_relaunch_writes_a_new_stack_json(tmp_path: Path, fake_env: Path, cohort_yaml: Callable[..., Path]) -> None:
    spec = _spec(tmp_path, fake_env, cohort_yaml)
    build = ensure_build(spec, "stock", cache=tmp_path / "cache")
    for _ in range(2):
        with launch(spec, cohort(spec, "stock-off"), "/models/none", tmp_path / "run", build, startup_timeout_s=60):
            pass
    assert sorted(p.name for p in (tmp_path / "run" / "stock-off").glob("stack*.json")) == [
        "stack-1.json",
        "stack.json",
    ]


def test_server_dying_at_start_fails_fast_with_log_tail(
    tmp_path: Path, fake_env: Path, cohort_yaml: Callable[..., Path]
) -> None:
    spec = _spec(tmp_path, fake_env, cohort_yaml, "server.args.fail_at_start=true")
    build = ensure_build(spec, "stock", cache=tmp_path / "cache")
    start = time.monotonic()
    with (
        pytest.raises(StackError) as err,
        launch(spec, cohort(spec, "stock-off"), "/models/none", None, build, startup_timeout_s=600),
    ):
        pass
    assert time.monotonic() - start < 300  # well before the start-up timeout (not a speed assert: a hang check)
    text = str(err.value)
    assert "exited with code 2" in text and "unrecognized arguments: --fail-at-start" in text
    assert "--fail-at-start" in err.value.command and str(build.python) in err.value.command


def test_verification_failure_starts_nothing(tmp_path: Path, fake_env: Path, cohort_yaml: Callable[..., Path]) -> None:
    spec = _spec(tmp_path, fake_env, cohort_yaml)
    build = ensure_build(spec, "reverted", cache=tmp_path / "cache")
    assert build.overlay is not None
    target = build.overlay / next(iter(build.patched_files))
    target.write_text("changed after the build\n")
    stack = launch(spec, cohort(spec, "reverted-off"), "/models/none", tmp_path / "run", build)
    with pytest.raises(StackError, match="patched files differ"), stack:
        pass
    assert stack.procs == []


def test_process_group_stop_kills_children(tmp_path: Path) -> None:
    child = "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])"
    code = f"import subprocess, sys, time; {child}; time.sleep(600)"
    p = ManagedProcess("server", 0, [sys.executable, "-c", code], dict(os.environ), {}, tmp_path / "x.log")
    p.start()
    assert p.pid is not None
    deadline = time.monotonic() + 30
    while len(group_members(p.pid)) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert len(group_members(p.pid)) == 2
    p.stop(term_timeout_s=10)
    assert group_members(p.pid) == []
    assert p.exit_code() is not None


def test_process_ignoring_term_is_killed(tmp_path: Path) -> None:
    code = (
        "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('up', flush=True); time.sleep(600)"
    )
    p = ManagedProcess("server", 0, [sys.executable, "-c", code], dict(os.environ), {}, tmp_path / "x.log")
    p.start()
    deadline = time.monotonic() + 30
    while not p.log_tail().endswith("IGNORING") and time.monotonic() < deadline:
        time.sleep(0.1)
    assert p.pid is not None
    p.stop(term_timeout_s=1)
    assert group_members(p.pid) == [] and p.exit_code() == -9


def test_a_cohort_pythonpath_follows_the_overlay(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A build with patches puts its overlay first on PYTHONPATH and keeps the cohort's after it (it replaced it)."""
    from eval.stacks.builds import BuildEnv
    from eval.stacks.commands import ProcessCommand
    from eval.stacks.local import LocalStack

    monkeypatch.setenv("PYTHONPATH", "/from/the/caller")
    build = BuildEnv("stock", "pip", None, None, tmp_path / "overlay", None, None, None, None)
    stack = LocalStack("c", [], build, tmp_path)
    cohort_cmd = ProcessCommand("server", 0, ["x"], env={"PYTHONPATH": "/cohort/a:/cohort/b", "X": "1"})
    env = stack._env_for(cohort_cmd)
    assert env["PYTHONPATH"] == f"{tmp_path / 'overlay'}:/cohort/a:/cohort/b"
    assert env["X"] == "1"
    caller = stack._env_for(ProcessCommand("server", 0, ["x"]))["PYTHONPATH"]
    assert caller == f"{tmp_path / 'overlay'}:/from/the/caller"
    no_overlay = LocalStack("c", [], BuildEnv("img", "docker", None, None, None, None, None, None, None), tmp_path)
    assert no_overlay._env_for(cohort_cmd)["PYTHONPATH"] == "/cohort/a:/cohort/b"
