"""Docker stacks against a test double of the Docker engine (tests/unit/stacks/docker_engine_double.py: a real
HTTP server on a unix socket running each container as a local process; no docker engine runs here). The SDK,
DockerStack, its watchdog and the container reaper are the real ones; the server in the container is the stub
vLLM server of conftest.py. The real-engine tier is tests/docker (opt-in)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from eval.spec.load import load_spec
from eval.stacks import ensure_build, launch
from eval.stacks.docker_stack import GONE
from eval.stacks.watchdog import EVENTS_FILE
from eval.store.run import open_run
from tests.unit.stacks.docker_engine_double import FakeDockerEngine
from tests.unit.stacks.test_watchdog import read_events, wait_for_event

docker = pytest.importorskip("docker")

REPO = Path(__file__).resolve().parents[3]
IMAGE = "fake/vllm-openai:0.32.0"


@pytest.fixture
def engine(tmp_path: Path, fake_env: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeDockerEngine]:
    with FakeDockerEngine(tmp_path / "engine", {IMAGE: str(fake_env / "bin" / "python")}) as e:
        monkeypatch.setenv("DOCKER_HOST", e.url)
        yield e


def cohort_file(tmp_path: Path) -> Path:
    path = tmp_path / "docker.yaml"
    path.write_text(
        f"""
schema_version: 1
name: docker-fake
model: {{path: /models/none, served_name: m}}
builds:
  stock: {{image: "{IMAGE}"}}
server: {{device: cpu}}
matrix:
  cohorts:
    - {{name: stock-off, build: stock}}
"""
    )
    return path


def kill_container(engine: FakeDockerEngine, cid: str) -> None:
    """The container's server dies (as an OOM kill would end it): SIGKILL its whole process group."""
    c = engine.containers[cid]
    assert c.popen is not None
    os.killpg(c.popen.pid, signal.SIGKILL)


def test_docker_stack_serves_is_restarted_by_its_watchdog_and_leaves_nothing(
    tmp_path: Path, engine: FakeDockerEngine
) -> None:
    loaded = load_spec([str(cohort_file(tmp_path)), "server.max_restarts=1"])
    run = open_run(loaded, tmp_path / "results", "docker")
    run.write_cohort(loaded, loaded.cohort("stock-off"), [])
    build = ensure_build(loaded.spec, "stock", cache=tmp_path / "cache")
    assert build.image == IMAGE
    events = run.cohort_dir("stock-off") / EVENTS_FILE
    with launch(loaded.spec, "stock-off", "/models/none", run.path, build, startup_timeout_s=60) as stack:
        probe = [c for c in engine.containers.values() if "-c" in c.argv]
        assert len(probe) == 1 and probe[0].removed  # the build was verified inside the image, then removed
        first = stack.procs[0].container.id
        assert stack.alive()  # a container has no Popen: alive() must still see it running
        assert httpx.get(stack.base_url + "/v1/models").json()["data"][0]["id"] == "m"
        assert engine.containers[first].argv[1:3] == ["-m", "vllm.entrypoints.openai.api_server"]
        assert engine.containers[first].labels == {"specqual.stack": stack.stack_id}

        kill_container(engine, first)
        died = wait_for_event(events, "died", 1, 15)
        assert died["exit_code"] == 137 and died["process"] == "server.0"
        restarted = wait_for_event(events, "restarted", 1, 60)
        second = stack.procs[0].container.id
        assert restarted["restarts"] == 1 and second != first and engine.containers[first].removed
        assert httpx.get(stack.base_url + "/health").status_code == 200 and stack.alive()

        kill_container(engine, second)  # server.max_restarts=1 (from the cohort file): the watchdog gives up
        gave_up = wait_for_event(events, "gave_up", 1, 30)
        assert gave_up["deaths"] == 2 and gave_up["max_restarts"] == 1
        assert not stack.alive()
    assert [e["event"] for e in read_events(events)] == ["died", "restarted", "died", "gave_up"]
    assert engine.live() == []  # every container removed, the probe's included
    log = (run.cohort_dir("stock-off") / "logs" / "server.0.log").read_text()
    assert log.count("=== specqual") == 2 and log.count(f"docker {IMAGE}") == 2  # both containers' logs kept
    stack_json = json.loads((run.cohort_dir("stock-off") / "stack.json").read_text())
    assert stack_json["stopped_at"] is not None and stack_json["build"] == "stock"


def test_a_container_removed_behind_the_stacks_back_is_replaced(tmp_path: Path, engine: FakeDockerEngine) -> None:
    loaded = load_spec([str(cohort_file(tmp_path))])
    build = ensure_build(loaded.spec, "stock", cache=tmp_path / "cache")
    with launch(loaded.spec, "stock-off", "/models/none", tmp_path / "run", build, startup_timeout_s=60) as stack:
        first = stack.procs[0].container.id
        docker.from_env().containers.get(first).remove(force=True)  # an operator's `docker rm -f`
        events = tmp_path / "run" / "stock-off" / EVENTS_FILE
        assert wait_for_event(events, "died", 1, 15)["exit_code"] == GONE
        wait_for_event(events, "restarted", 1, 60)
        assert stack.procs[0].container.id != first and stack.alive()
        assert httpx.get(stack.base_url + "/health").status_code == 200
    assert engine.live() == []


def test_the_watchdog_outlives_an_engine_that_stops_answering(tmp_path: Path, engine: FakeDockerEngine) -> None:
    """While the engine is away (dockerd restarting) the watchdog cannot ask for a container's state; /health
    still answers, so nothing is restarted, and once the engine is back a dead container is still replaced."""
    loaded = load_spec([str(cohort_file(tmp_path))])
    build = ensure_build(loaded.spec, "stock", cache=tmp_path / "cache")
    events = tmp_path / "run" / "stock-off" / EVENTS_FILE
    with launch(loaded.spec, "stock-off", "/models/none", tmp_path / "run", build, startup_timeout_s=60) as stack:
        assert stack.watchdog is not None
        stack.watchdog.poll_s = 0.2
        engine.pause()
        time.sleep(2.0)  # about 10 polls that cannot reach the engine
        assert read_events(events) == [] and httpx.get(stack.base_url + "/health").status_code == 200
        engine.resume()
        first = stack.procs[0].container.id
        kill_container(engine, first)
        assert wait_for_event(events, "died", 1, 15)["exit_code"] == 137
        wait_for_event(events, "restarted", 1, 60)
        assert stack.procs[0].container.id != first and stack.alive()
    assert engine.live() == []


DRIVER = r"""
import sys, threading, time
from pathlib import Path
from eval.spec.load import load_spec
from eval.stacks import ensure_build, launch
from eval.stacks.docker_stack import GONE

spec = load_spec([sys.argv[1]]).spec
build = ensure_build(spec, "stock", cache=Path(sys.argv[2]))
stack = launch(spec, "stock-off", "/models/none", None, build, startup_timeout_s=60)
stack.__enter__()
print(stack.procs[0].container.id, flush=True)
time.sleep(600)
"""


def test_a_sigkilled_driver_leaves_no_container_running(tmp_path: Path, engine: FakeDockerEngine) -> None:
    argv = [sys.executable, "-c", DRIVER, str(cohort_file(tmp_path)), str(tmp_path / "cache")]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    driver = subprocess.Popen(argv, cwd=REPO, env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert driver.stdout is not None
        cid = driver.stdout.readline().strip()
        container = engine.containers[cid]
        assert container.exit_code() is None and not container.removed
        os.kill(driver.pid, signal.SIGKILL)
        driver.wait(10)
        killed = time.monotonic()
        while not container.removed and time.monotonic() - killed < 15:
            time.sleep(0.1)
        gone_s = time.monotonic() - killed
        assert container.removed and container.exit_code() is not None
        assert gone_s < 10, f"the container outlived its driver by {gone_s:.1f} s"
        assert any(r.startswith("POST /containers/") and "/stop?t=" in r for r in container.requests)
    finally:
        if driver.poll() is None:
            driver.kill()
