"""A stack of docker containers (`vllm/vllm-openai` style images), one per vLLM process, host networking.

Same readiness, logs, provenance and stop semantics as the local stack (it reuses LocalStack); only the
process is a container: GPUs through the SDK's device requests, the model directory mounted read-only at the
same path, logs copied from the container into `<run>/<cohort>/logs/`. A P/D router runs as a local process.
Verification runs the same probe inside the image: the patched files must hash to what the image recorded.
An image made here around a cached environment (eval.images.env) names the host paths it needs in its
`specqual.binds` label; they are mounted read-only at the same paths in every container of it.
The stack's watchdog restarts a container that dies mid-run (a new container, same arguments and port), and
each container has a reaper that stops and removes it if the driver dies without doing so (SIGKILL included).
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass
from typing import Any

from eval.stacks.commands import SERVER_MODULE, ProcessCommand
from eval.stacks.local import LocalStack, StackError
from eval.stacks.probe import _PROBE
from eval.stacks.process import ManagedProcess, now_iso
from eval.stacks.reaper import ContainerReaper


def _docker() -> Any:
    try:
        import docker
    except ImportError as e:
        raise StackError("docker stacks need the docker SDK: pip install docker") from e
    return docker


GONE = -1  # the exit code reported for a container that no longer exists
BINDS_LABEL = "specqual.binds"  # set by eval.images.env: host paths to mount read-only (a JSON list)


def image_binds(client: Any, image: str) -> list[str]:
    """The host paths an image made here needs mounted read-only at the same paths (none for other images)."""
    try:
        labels = client.images.get(image).labels or {}
    except Exception:  # not present (the engine pulls it when the container starts): nothing of ours to mount
        return []
    raw = labels.get(BINDS_LABEL)
    return [str(p) for p in json.loads(raw)] if raw else []


def docker_host() -> str:
    """The engine the SDK's `from_env()` talks to, for the container reaper (`unix://...` or `tcp://...`)."""
    return os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"


@dataclass
class ContainerProcess(ManagedProcess):
    """One vLLM process as a container. A restart (the stack's watchdog) runs a new container with the same
    arguments; the log keeps every container's output, each after its own `=== specqual` header."""

    image: str = ""
    gpu_ids: tuple[int, ...] = ()
    mounts: tuple[str, ...] = ()
    container: Any = None
    _log_base: int = 0  # where the running container's output starts in the log file

    def start(self) -> None:
        docker = _docker()
        client = docker.from_env()
        devices = []
        if self.gpu_ids:
            ids = [str(i) for i in self.gpu_ids]
            devices = [docker.types.DeviceRequest(device_ids=ids, capabilities=[["gpu"]])]
        volumes = {m: {"bind": m, "mode": "ro"} for m in self.mounts}
        entry_len = 3 if self.argv[1:3] == ["-m", SERVER_MODULE] else 1
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("ab") as log:
            log.write(f"=== specqual {now_iso()}: docker {self.image} {self.shell()}\n".encode())
            self._log_base = log.tell()
        self.container = client.containers.run(
            self.image,
            command=self.argv[entry_len:],
            entrypoint=["python3", "-m", SERVER_MODULE],
            environment={k: v for k, v in self.env_shown.items() if k != "CUDA_VISIBLE_DEVICES"},
            network_mode="host",
            ipc_mode="host",
            device_requests=devices,
            volumes=volumes,
            detach=True,
            labels={"specqual.stack": self.env.get("SPECQUAL_STACK_ID", "")},
        )
        host = docker_host()
        if host.startswith(("unix://", "tcp://")) and not os.environ.get("DOCKER_TLS_VERIFY"):
            self.reaper = ContainerReaper(host, self.container.id)  # removed with the driver, even on SIGKILL

    @property
    def pid(self) -> int | None:
        return None

    def _sync_log(self) -> None:
        if self.container is None:
            return
        try:
            text = self.container.logs()
        except _docker().errors.NotFound:  # removed behind our back: its output is gone with it
            return
        with self.log_path.open("r+b") as log:
            log.truncate(self._log_base)
            log.seek(self._log_base)
            log.write(text)

    def exit_code(self) -> int | None:
        """The container's exit code; GONE when it was removed behind the stack's back (`docker rm -f`)."""
        if self.container is None:
            return None
        try:
            self.container.reload()
        except _docker().errors.NotFound:
            return GONE
        if self.container.status in ("exited", "dead"):
            return int(self.container.attrs["State"]["ExitCode"])
        return None

    def running(self) -> bool:
        return self.container is not None and self.exit_code() is None

    def log_tail(self, lines: int = 60) -> str:
        self._sync_log()
        return super().log_tail(lines)

    def stop(self, term_timeout_s: float = 30.0) -> None:
        if self.container is None:
            return
        self._sync_log()
        with contextlib.suppress(_docker().errors.NotFound):  # already removed: nothing left to stop
            self.container.stop(timeout=int(term_timeout_s))
            self._sync_log()
            self.container.remove(force=True)
        self.container = None
        if self.reaper is not None:
            self.reaper.disarm()
            self.reaper = None


class DockerStack(LocalStack):
    """See the module docstring. `model_dir` is mounted read-only at the same path in every container."""

    def __init__(self, *args: Any, model_dir: str = "", **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.model_dir = model_dir

    def _binds(self) -> tuple[str, ...]:
        return tuple(image_binds(_docker().from_env(), self.build.image or ""))

    def _verify(self) -> dict[str, Any]:
        assert self.build.image is not None
        client = _docker().from_env()
        files = json.dumps(sorted(self.build.patched_files))
        volumes = {m: {"bind": m, "mode": "ro"} for m in self._binds()}
        argv = ["python3", "-c", _PROBE, files]
        out = client.containers.run(self.build.image, argv, entrypoint="", remove=True, volumes=volumes)
        found: dict[str, Any] = json.loads(out)
        bad = [f for f, h in found["hashes"].items() if h != self.build.patched_files[f]]
        if bad:
            raise StackError(f"image {self.build.image}: patched files differ from the build: {bad}")
        return found

    def _process(self, cmd: ProcessCommand, mapping: dict[str, str], shown: dict[str, str]) -> ManagedProcess:
        proc = super()._process(cmd, {**mapping, "python": "python3"}, shown)
        if cmd.role == "router":
            return proc
        gpus = tuple(int(x) for x in shown.get("CUDA_VISIBLE_DEVICES", "").split(",") if x)
        model = self.model_dir if self.model_dir.startswith("/") else ""
        return ContainerProcess(
            proc.role,
            proc.index,
            proc.argv,
            proc.env,
            proc.env_shown,
            proc.log_path,
            proc.port,
            image=self.build.image or "",
            gpu_ids=gpus,
            mounts=((model,) if model else ()) + self._binds(),
        )
