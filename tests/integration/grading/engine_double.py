"""Test double of a docker engine, backed by the real bwrap sandbox: lets the harness's real `run_instance` run
on the local task set where no docker engine exists (this machine, CI).

It implements only what `run_instance` touches: `images.get`, `containers.get/create`, a container's `start`,
`exec_run`, `put_archive`, and the low-level `api.exec_create/exec_start/exec_inspect`. Files the harness copies
into the container (`/tmp/patch.diff`, `/eval.sh`) land in the sandbox's read-only share, and commands naming
them are pointed there, because the bwrap sandbox gives every command a fresh /tmp.
"""

from __future__ import annotations

import io
import itertools
import tarfile
from dataclasses import dataclass
from typing import Any

import docker.errors

from eval.protocols import Task
from eval.sandbox.bwrap import SHARE, BwrapSandbox

_IDS = itertools.count(1)


@dataclass
class ExecOutput:
    exit_code: int
    output: bytes


class BwrapContainer:
    def __init__(self, task: Task, name: str) -> None:
        self.id = f"double-{next(_IDS)}"
        self.name = name
        self.sandbox = BwrapSandbox(task, memory_gb=4)
        self.files: dict[str, str] = {}
        self.removed = False

    def start(self) -> None:
        return None

    def _command(self, cmd: str | list[str]) -> str:
        text = cmd[-1] if isinstance(cmd, list) else cmd
        for path, shared in self.files.items():
            text = text.replace(path, shared)
        return text

    def exec_run(self, cmd: str | list[str], **_: Any) -> ExecOutput:
        result = self.sandbox.execute(self._command(cmd), timeout_s=600)
        return ExecOutput(result.exit_code, result.output.encode())

    def put_archive(self, path: str, data: bytes) -> bool:
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            for member in tar.getmembers():
                content = tar.extractfile(member)
                assert content is not None
                name = f"{path.rstrip('/')}/{member.name}"
                self.files[name] = self.sandbox.put(member.name, content.read().decode())
                assert self.files[name].startswith(SHARE)
        return True


class _Api:
    def __init__(self, engine: BwrapEngine) -> None:
        self.engine = engine
        self.execs: dict[str, tuple[BwrapContainer, str]] = {}

    def exec_create(self, container_id: str, cmd: str) -> dict[str, str]:
        exec_id = f"exec-{next(_IDS)}"
        self.execs[exec_id] = (self.engine.by_id[container_id], cmd)
        return {"Id": exec_id}

    def exec_start(self, exec_id: str, stream: bool = False) -> Any:
        container, cmd = self.execs[exec_id]
        yield container.exec_run(cmd).output

    def exec_inspect(self, exec_id: str) -> dict[str, Any]:
        return {"Pid": None, "ExitCode": 0}


class _Images:
    def get(self, name: str) -> str:
        return name


class _Containers:
    def __init__(self, engine: BwrapEngine) -> None:
        self.engine = engine

    def get(self, name: str) -> None:
        raise docker.errors.NotFound(f"no container {name}")

    def create(self, image: str, name: str, **_: Any) -> BwrapContainer:
        container = BwrapContainer(self.engine.task, name)
        container.client = self.engine  # type: ignore[attr-defined]
        self.engine.by_id[container.id] = container
        return container


class BwrapEngine:
    """The engine double for one task (the harness asks for the instance's image; this one serves that task)."""

    def __init__(self, task: Task) -> None:
        self.task = task
        self.by_id: dict[str, BwrapContainer] = {}
        self.api = _Api(self)
        self.images = _Images()
        self.containers = _Containers(self)

    def ping(self) -> bool:
        return True

    def cleanup(self, client: Any, container: BwrapContainer | None, logger: Any) -> None:
        """Stands in for the harness's `cleanup_container` (which shells out to the docker CLI)."""
        if container is not None:
            container.sandbox.close()
            container.removed = True
