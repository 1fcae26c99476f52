"""The docker sandbox without an engine: the image naming rule, and a missing engine is a SandboxError.

Everything the sandbox asks of an engine (isolation, limits, the time limit, exit codes, diff, removal) is tested
against a real engine in tests/docker/test_docker_sandbox.py.
"""

from __future__ import annotations

import pytest

from eval.protocols import Task
from eval.sandbox.bwrap import SandboxError
from eval.sandbox.docker import DockerSandbox, instance_image

TASK = Task("astropy__astropy-12907", "astropy/astropy", "d16bfe05", "", "p", "t", ["a"], [])


def test_the_harness_naming_rule_and_the_record_image_wins() -> None:
    assert instance_image(TASK) == "swebench/sweb.eval.x86_64.astropy_1776_astropy-12907:latest"
    task = Task("a__b-1", "a/b", "0", "", "p", "t", ["x"], [], raw={"image": "registry.local/a-b:1"})
    assert instance_image(task) == "registry.local/a-b:1"


def test_no_engine_is_a_sandbox_error(tmp_path) -> None:
    docker = pytest.importorskip("docker")
    client = docker.DockerClient(base_url=f"unix://{tmp_path}/none.sock", version="1.41")  # real SDK, no engine
    with pytest.raises(SandboxError, match="no docker engine"):
        DockerSandbox(TASK, client=client)
