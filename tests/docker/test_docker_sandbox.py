"""The docker sandbox on a real engine: one container per unit from the instance image made here, no network,
CPU and memory limits, a time limit that kills the command's whole process group, the container removed."""

from __future__ import annotations

import time
from typing import Any

import pytest

from eval.protocols import Task
from eval.sandbox.bwrap import SandboxError
from eval.sandbox.docker import DockerSandbox
from tests.docker.conftest import by_id

pytestmark = pytest.mark.docker


def test_isolation_limits_time_limit_diff_and_removal(docker_client: Any, tasks: list[Task]) -> None:
    task = by_id(tasks, "calc")
    box = DockerSandbox(task, cpus=1, memory_gb=0.25, client=docker_client)
    container = box._container
    try:
        config = docker_client.api.inspect_container(container.id)["HostConfig"]
        assert (config["NanoCpus"], config["Memory"], config["NetworkMode"]) == (10**9, 256 * 2**20, "none")
        interfaces = box.execute("ls /sys/class/net", 30).output.split()
        assert interfaces == ["lo"]  # only loopback: nothing outside the container can be reached
        net = box.execute("python -c \"import socket; socket.create_connection(('1.1.1.1', 53), timeout=5)\"", 60)
        assert net.exit_code != 0 and "Network is unreachable" in net.output
        assert box.execute("python -c 'x = bytearray(600 * 2**20)'", 60).exit_code == 137  # killed at 256 MB
        assert box.execute("command -v python && git rev-parse HEAD", 30).output.split() == [
            "/opt/miniconda3/envs/testbed/bin/python",  # the testbed env is active, as in SWE-bench images
            task.base_commit,
        ]
        started = time.monotonic()
        slow = box.execute("(sleep 300; echo never) & sleep 300", timeout_s=2)
        assert slow.timed_out and "never" not in slow.output
        assert time.monotonic() - started < 30
        assert "sleep" not in box.execute("ps -eo comm", 30).output  # the whole group died with it
        assert box.execute("echo hi > NEW_FILE.txt && sed -i 's/- 1)/)/' calc/stats.py", 30).exit_code == 0
        patch = box.diff()
        assert "+++ b/NEW_FILE.txt" in patch and "+++ b/calc/stats.py" in patch
        assert box.execute("exit 3", 30).exit_code == 3
        box.base_commit = "0" * 40  # a base commit the repository lacks: git diff fails, and says so
        with pytest.raises(SandboxError, match="git diff failed"):
            box.diff()
    finally:
        box.close()
    assert container.id not in {c.id for c in docker_client.containers.list(all=True)}
    box.close()  # idempotent
    with pytest.raises(SandboxError, match="closed"):
        box.execute("true", 10)
