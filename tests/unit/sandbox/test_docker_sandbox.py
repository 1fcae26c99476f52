"""The docker sandbox's bookkeeping against a test double of the docker SDK (no engine runs here).

The real engine is exercised by the opt-in tests/docker tier; this checks what the sandbox asks of the SDK
(isolation settings, the in-container time limit) and how it reads answers (exit codes, timeouts, removal).
"""

from __future__ import annotations

from typing import Any

import pytest

from eval.protocols import Task
from eval.sandbox.bwrap import SandboxError
from eval.sandbox.docker import DockerSandbox, instance_image

TASK = Task("astropy__astropy-12907", "astropy/astropy", "d16bfe05", "", "p", "t", ["a"], [])


class FakeContainer:
    id = "c1"

    def __init__(self) -> None:
        self.removed = False

    def remove(self, force: bool = False) -> None:
        self.removed = True


class FakeApi:
    """Test double of the low-level exec API: answers each exec with scripted output and exit code."""

    def __init__(self, answers: list[tuple[bytes, int]]) -> None:
        self.answers = answers
        self.commands: list[list[str]] = []

    def exec_create(self, container: str, cmd: list[str], workdir: str) -> dict[str, str]:
        self.commands.append(cmd)
        return {"Id": str(len(self.commands) - 1)}

    def exec_start(self, exec_id: str, stream: bool) -> Any:
        yield self.answers[int(exec_id)][0]

    def exec_inspect(self, exec_id: str) -> dict[str, Any]:
        return {"Running": False, "ExitCode": self.answers[int(exec_id)][1], "Pid": 0}


class FakeClient:
    """Test double of `docker.DockerClient`."""

    def __init__(self, answers: list[tuple[bytes, int]], up: bool = True) -> None:
        self.api = FakeApi(answers)
        self.container = FakeContainer()
        self.run_kwargs: dict[str, Any] = {}
        self.up = up
        self.containers = self

    def ping(self) -> bool:
        if not self.up:
            raise ConnectionError("Cannot connect to the Docker daemon")
        return True

    def run(self, image: str, **kwargs: Any) -> FakeContainer:
        self.run_kwargs = {"image": image, **kwargs}
        return self.container


def test_container_is_isolated_and_limited() -> None:
    client = FakeClient([])
    with DockerSandbox(TASK, cpus=2, memory_gb=4, client=client):
        pass
    kwargs = client.run_kwargs
    assert kwargs["image"] == "swebench/sweb.eval.x86_64.astropy_1776_astropy-12907:latest"
    assert kwargs["network_mode"] == "none"
    assert kwargs["nano_cpus"] == 2_000_000_000
    assert kwargs["mem_limit"] == "4096m"
    assert client.container.removed


def test_exit_codes_and_the_time_limit() -> None:
    client = FakeClient([(b"ok\n", 0), (b"partial", 124), (b"boom", 2)])
    box = DockerSandbox(TASK, client=client)
    try:
        assert box.execute("echo ok", 30).output == "ok\n"
        slow = box.execute("sleep 99", 5)
        assert slow.timed_out and slow.output == "partial"
        assert box.execute("false", 30).exit_code == 2
    finally:
        box.close()
    assert client.api.commands[1][-1].startswith("timeout --kill-after=5 5 bash -c ")


def test_failed_diff_and_closed_sandbox_raise() -> None:
    box = DockerSandbox(TASK, client=FakeClient([(b"fatal: bad revision", 128)]))
    with pytest.raises(SandboxError, match="git diff failed"):
        box.diff()
    box.close()
    box.close()
    with pytest.raises(SandboxError, match="closed"):
        box.execute("true", 1)


def test_no_engine_is_a_sandbox_error() -> None:
    with pytest.raises(SandboxError, match="no docker engine"):
        DockerSandbox(TASK, client=FakeClient([], up=False))


def test_record_image_wins_over_the_naming_rule() -> None:
    task = Task("a__b-1", "a/b", "0", "", "p", "t", ["x"], [], raw={"image": "registry.local/a-b:1"})
    assert instance_image(task) == "registry.local/a-b:1"
