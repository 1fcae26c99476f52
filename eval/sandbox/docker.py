"""A docker sandbox: one container of the SWE-bench instance image per unit, network off, CPU/memory limits.

A local task set's instance image is built here (eval.images) on first use; other tasks use the harness's
pulled images.

Commands run through the engine's exec API with `timeout` inside the container (its process group is killed
at the limit) and a client-side deadline as a backstop; output is read as a stream and truncated to head and
tail. The patch is `git diff` of /testbed against the base commit. `close` always removes the container.
"""

from __future__ import annotations

import contextlib
import shlex
import threading
import time
from typing import Any

from eval.images.base import ImageError
from eval.images.instance import resolve_image
from eval.protocols import ExecResult, Task
from eval.sandbox.bwrap import SandboxError
from eval.sandbox.process import Collector

WORKDIR = "/testbed"
GRACE_S = 10


def instance_image(task: Task) -> str:
    """The image the harness uses for the instance (the record's `image`, else the harness's naming rule)."""
    image = task.raw.get("image")
    if image:
        return str(image)
    key = f"sweb.eval.x86_64.{task.instance_id}:latest".lower()
    return f"swebench/{key}".replace("__", "_1776_")


class DockerSandbox:
    def __init__(
        self,
        task: Task,
        *,
        cpus: float = 1.0,
        memory_gb: float = 8.0,
        max_output_bytes: int = 1_000_000,
        client: Any = None,
    ) -> None:
        try:
            import docker

            self._client = client or docker.from_env()
            self._client.ping()
        except Exception as e:
            raise SandboxError(f"no docker engine: {e}") from e
        self.base_commit = task.base_commit
        self._max_output = max_output_bytes
        self._container: Any = None
        try:
            task = resolve_image(self._client, task)
        except ImageError as e:
            raise SandboxError(f"cannot build the instance image of {task.instance_id}: {e}") from e
        try:
            self._container = self._client.containers.run(
                instance_image(task),
                command="tail -f /dev/null",
                detach=True,
                network_mode="none",  # `--network none`: only loopback
                nano_cpus=int(cpus * 1e9),
                mem_limit=f"{int(memory_gb * 1024)}m",
                working_dir=WORKDIR,
                labels={"specqual.instance": task.instance_id},
            )
        except Exception as e:
            self.close()
            raise SandboxError(f"cannot start {instance_image(task)}: {e}") from e

    @property
    def workdir(self) -> str:
        return WORKDIR

    def execute(self, command: str, timeout_s: float) -> ExecResult:
        if self._container is None:
            raise SandboxError("the sandbox is closed")
        # SWE-bench images activate the `testbed` conda environment in /root/.bashrc
        inner = f"[ -f ~/.bashrc ] && source ~/.bashrc >/dev/null 2>&1; {command}"
        wrapped = f"timeout --kill-after=5 {max(1, round(timeout_s))} bash -c {shlex.quote(inner)}"
        api = self._client.api
        exec_id = api.exec_create(self._container.id, ["bash", "-c", wrapped], workdir=WORKDIR)["Id"]
        collector = Collector(self._max_output)
        reader = threading.Thread(target=_read, args=(api, exec_id, collector), daemon=True)
        started = time.monotonic()
        reader.start()
        reader.join(timeout_s + GRACE_S)
        if reader.is_alive():  # the in-container timeout did not end it: kill the exec's process from outside
            pid = api.exec_inspect(exec_id).get("Pid")
            if pid:
                self._container.exec_run(f"kill -KILL {pid}", detach=True)
            return ExecResult(exit_code=-9, output=collector.text(), timed_out=True)
        code = _exit_code(api, exec_id)
        timed_out = code == 124 or (code == 137 and time.monotonic() - started >= timeout_s)
        return ExecResult(exit_code=code, output=collector.text(), timed_out=timed_out)

    def diff(self) -> str:
        command = f"git add -A && git -c core.fileMode=false diff --cached --no-color --no-ext-diff {self.base_commit}"
        result = self.execute(command, timeout_s=120)
        if result.exit_code != 0:
            raise SandboxError(f"git diff failed: {result.output[-500:]}")
        return result.output

    def close(self) -> None:
        container, self._container = self._container, None
        if container is not None:
            with contextlib.suppress(Exception):  # already gone: nothing left to remove
                container.remove(force=True)

    def __enter__(self) -> DockerSandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _exit_code(api: Any, exec_id: str, wait_s: float = 5) -> int:
    """The exec's exit code; the engine may report it a moment after the output stream ends."""
    deadline = time.monotonic() + wait_s
    while True:
        info = api.exec_inspect(exec_id)
        if not info.get("Running") and info.get("ExitCode") is not None:
            return int(info["ExitCode"])
        if time.monotonic() >= deadline:
            return -1
        time.sleep(0.05)


def _read(api: Any, exec_id: str, collector: Collector) -> None:
    for chunk in api.exec_start(exec_id, stream=True):
        collector.add(chunk)
