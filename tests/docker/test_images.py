"""Images made here: the base image from debootstrap and the local set's instance images, on a real engine."""

from __future__ import annotations

from typing import Any

import pytest

from eval.images.base import base_tag
from eval.images.instance import ensure_instance_image, harness_image_name, resolve_image
from eval.protocols import Task
from eval.sandbox.docker import instance_image
from tests.docker.conftest import by_id

pytestmark = pytest.mark.docker


def test_instance_image_is_laid_out_as_swebench_images_are(docker_client: Any, tasks: list[Task], image_cache) -> None:
    from swebench.task.checks import expected_image

    task = by_id(tasks, "calc")
    name = ensure_instance_image(docker_client, task, image_cache)
    assert name == expected_image(task.instance_id) == instance_image(task) == harness_image_name(task.instance_id)
    first = docker_client.images.get(name).id
    assert ensure_instance_image(docker_client, task, image_cache) == name
    assert docker_client.images.get(name).id == first  # cached by hash: the second call built nothing
    assert docker_client.images.get(base_tag()).id  # the base image it came from is kept for the next one
    assert resolve_image(docker_client, task, image_cache).raw["image"] == name
    script = (
        "source /opt/miniconda3/bin/activate; conda activate testbed; "  # the SWE-bench eval scripts' first line
        "command -v python; git -C /testbed rev-parse HEAD; git -C /testbed status --porcelain | wc -l; "
        "python -m pytest --version; patch --version | head -1"
    )
    out = docker_client.containers.run(name, ["bash", "-c", script], network_mode="none", remove=True).decode()
    lines = out.splitlines()
    assert lines[0] == "/opt/miniconda3/envs/testbed/bin/python"
    assert lines[1] == task.base_commit and lines[2] == "0"  # /testbed: the repository at its base commit, clean
    assert "pytest" in out and "GNU patch" in out
