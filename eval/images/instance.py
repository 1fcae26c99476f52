"""Instance images for local task sets, laid out as SWE-bench instance images are.

An instance image is the base image (eval.images.base) plus the task's repository at its base commit in
/testbed, named as the harness names SWE-bench images (`swebench/sweb.eval.x86_64.<id>:latest`, `__` ->
`_1776_`), so `run_instance` and the docker sandbox find it exactly as they find a pulled one. It is imported
from the base rootfs tarball with the repository appended (`docker import`, seconds; a layered `docker build`
gains nothing on vfs, which copies the whole rootfs per layer anyway). Each image also carries a tag
`:sq-<hash>` of the base key, the instance id and its base commit: an image of that hash is never rebuilt, and
`:latest` is pointed at it again if something else took the name.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

from eval.images.base import ImageError, ensure_base, has_image, import_tar
from eval.protocols import Task
from eval.stacks.envs import cache_root, file_lock, short_hash
from eval.tasks.records import REPO_PATH_KEY

_LOCK = threading.Lock()  # one build at a time in a process (threads of several cohorts may ask at once)


def harness_image_name(instance_id: str, namespace: str = "swebench") -> str:
    """The name the harness derives for an instance (`swebench.task.checks.expected_image`)."""
    key = f"sweb.eval.x86_64.{instance_id}:latest".lower()
    return f"{namespace}/{key}".replace("__", "_1776_")


def buildable(task: Task) -> bool:
    """Only local task sets are built here; real SWE-bench images come from their registry."""
    return bool(task.raw.get(REPO_PATH_KEY))


def _git(*argv: str) -> None:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    done = subprocess.run(["git", *argv], capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:
        raise ImageError(f"git {' '.join(argv)}: {done.stderr.strip()[-300:]}")


def _testbed_tar(task: Task, base_tar: Path, target: Path) -> None:
    """The base rootfs with the repository (history included, at the base commit, no remote) at /testbed."""
    with tempfile.TemporaryDirectory(prefix="specqual-testbed-", dir=target.parent) as td:
        tree = Path(td) / "testbed"
        _git("clone", "-q", "--no-checkout", str(task.raw[REPO_PATH_KEY]), str(tree))
        _git("-C", str(tree), "checkout", "-q", "--detach", task.base_commit)
        _git("-C", str(tree), "remote", "remove", "origin")
        shutil.copyfile(base_tar, target)
        done = subprocess.run(
            ["tar", "-C", td, "--owner=0", "--group=0", "--numeric-owner", "-rf", str(target), "testbed"],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise ImageError(f"appending /testbed to the image tarball failed: {done.stderr[-500:]}")


def ensure_instance_image(client: Any, task: Task, cache: Path | None = None) -> str:
    """The instance image's name (`harness_image_name`), built from the base image when absent."""
    if not buildable(task):
        raise ImageError(f"{task.instance_id}: not a local task set instance; pull its SWE-bench image instead")
    with _LOCK:
        base, base_tar = ensure_base(client, cache)
        name = harness_image_name(task.instance_id)
        key = short_hash({"base": base, "id": task.instance_id, "commit": task.base_commit})
        hashed = f"{name.rpartition(':')[0]}:sq-{key}"
        root = cache_root(cache) / "docker"
        with file_lock(root / "instances.lock"):
            if not has_image(client, hashed):
                tar = root / f"instance-{hashed.rpartition(':')[2]}.tar"
                try:
                    _testbed_tar(task, base_tar, tar)
                    import_tar(client, tar, hashed)
                finally:
                    tar.unlink(missing_ok=True)
            image = client.images.get(hashed)
            if name not in image.tags:
                repo, _, tag = name.rpartition(":")
                image.tag(repo, tag)
        return name


def resolve_image(client: Any, task: Task, cache: Path | None = None) -> Task:
    """The task as the harness and the docker sandbox need it: a local-set task gets its instance image built
    here and named in its record; any other task keeps its record's `image` (pulled by the harness)."""
    if task.raw.get("image") or not buildable(task):
        return task
    return replace(task, raw={**task.raw, "image": ensure_instance_image(client, task, cache)})
