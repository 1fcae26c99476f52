"""A stack of local processes: one vLLM server, or prefill/decode workers plus a router, with one base URL.

Start order: verify the build (nothing starts if the code is not the build's), then every vLLM process, wait
until each answers /health and /v1/models, then the router (P/D), wait for it too. A process that exits while
starting fails the launch at once with its log tail and the exact command line; everything started is stopped.
Once ready, a watchdog (eval.stacks.watchdog) restarts a process that dies mid-run, up to `max_restarts` times,
and records each death and restart in `<cohort dir>/server_events.jsonl`.
"""

from __future__ import annotations

import os
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import httpx

from eval.secrets import redact_argv, redact_env
from eval.stacks.builds import BuildEnv
from eval.stacks.commands import ProcessCommand, render
from eval.stacks.lifecycle import StartStop
from eval.stacks.process import ManagedProcess, now_iso
from eval.stacks.provenance import gpu_inventory, host_name, safe_env, stack_json_path
from eval.stacks.resources import GpuPool, free_ports
from eval.stacks.verify import verify_launch
from eval.stacks.watchdog import EVENTS_FILE, Watchdog
from eval.store.atomic import atomic_write_json
from store.stack_records import LaunchCommand, PatchFile, StackRecord


class StackError(Exception):
    """A stack could not start (or verify); the message has the command line and the log tail."""

    def __init__(self, message: str, command: str = "", log_tail: str = "") -> None:
        super().__init__(message + (f"\ncommand: {command}" if command else "") + (f"\n{log_tail}" if log_tail else ""))
        self.command = command
        self.log_tail = log_tail


def _answers(url: str, path: str, client: httpx.Client) -> bool:
    try:
        r = client.get(url + path)
    except httpx.HTTPError:
        return False
    return r.status_code == 200


class LocalStack(StartStop):
    """See the module docstring. Construct through `eval.stacks.launch`; use as a context manager."""

    def __init__(
        self,
        cohort: str,
        commands: list[ProcessCommand],
        build: BuildEnv,
        out_dir: Path,
        *,
        host: str = "127.0.0.1",
        extra_env: dict[str, str] | None = None,
        gpu_pool: GpuPool | None = None,
        startup_timeout_s: float = 1800.0,
        write_stack_json: bool = True,
        max_restarts: int = 3,
        watch_poll_s: float = 2.0,
    ) -> None:
        self.cohort = cohort
        self.commands = commands
        self.build = build
        self.out_dir = out_dir
        self.host = host
        self.extra_env = dict(extra_env or {})
        self.gpu_pool = gpu_pool
        self.startup_timeout_s = startup_timeout_s
        self.write_stack_json = write_stack_json
        self.max_restarts = max_restarts
        self.watch_poll_s = watch_poll_s
        self.watchdog: Watchdog | None = None
        self.stack_id = uuid.uuid4().hex[:12]
        self.procs: list[ManagedProcess] = []
        self._gpus: list[int] = []
        self._probe: dict[str, Any] = {}
        self._launched_at: str | None = None
        self._stopped_at: str | None = None
        self._stack_json: Path | None = None

    # ------------------------------------------------------------ addresses

    @property
    def marker(self) -> str:
        """`SPECQUAL_STACK_ID=<id>`: set in every process of the stack, to find stragglers."""
        return f"SPECQUAL_STACK_ID={self.stack_id}"

    def _entry(self) -> ManagedProcess:
        routers = [p for p in self.procs if p.role == "router"]
        return routers[0] if routers else self.procs[0]

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self._entry().port}"

    @property
    def metrics_urls(self) -> list[str]:
        return [f"http://{self.host}:{p.port}/metrics" for p in self.procs if p.role != "router"]

    def command_lines(self) -> list[str]:
        return [p.shell() for p in self.procs]

    @property
    def log_dir(self) -> Path:
        return self.out_dir / "logs"

    # ------------------------------------------------------------ start

    def _mapping(self) -> dict[str, str]:
        ports = free_ports(len(self.commands), self.host)
        mapping = {"python": str(self.build.python), "host": self.host}
        for cmd, port in zip(self.commands, ports, strict=True):
            mapping[f"port.{cmd.key}"] = str(port)
            mapping[f"url.{cmd.key}"] = f"http://{self.host}:{port}"
        return mapping

    def _vllm_env(self, cohort_env: dict[str, str] | None = None) -> dict[str, str]:
        """Variables every vLLM process of this stack gets (cohort env, overlay, device). The overlay goes first
        on the PYTHONPATH the process would have had: the cohort's (`cohort_env`, then `extra_env`) if it sets
        one, else this process's."""
        env = dict(self.extra_env)
        env.update(self.build.launch_env({**os.environ, **(cohort_env or {}), **self.extra_env}))
        return env

    def _process(self, cmd: ProcessCommand, mapping: dict[str, str], shown: dict[str, str]) -> ManagedProcess:
        if cmd.role == "router":
            from eval.stacks.router import router_argv

            argv = router_argv(render(cmd.argv, {**mapping, "python": sys.executable}), self.build)
        else:
            argv = render(cmd.argv, mapping)
        env = {**os.environ, **shown, "SPECQUAL_STACK_ID": self.stack_id}
        port = int(mapping[f"port.{cmd.key}"])
        log = self.out_dir / "logs" / f"{cmd.role}.{cmd.index}.log"
        return ManagedProcess(cmd.role, cmd.index, argv, env, shown, log, port)

    def _env_for(self, cmd: ProcessCommand) -> dict[str, str]:
        if cmd.role == "router":
            return dict(cmd.env)
        shown = {**cmd.env, **self._vllm_env(cmd.env)}
        if cmd.gpus and self.gpu_pool is not None:
            ids = self.gpu_pool.acquire(cmd.gpus)
            self._gpus += ids
            shown["CUDA_VISIBLE_DEVICES"] = ",".join(map(str, ids))
        if cmd.role in ("prefill", "decode"):
            shown["VLLM_NIXL_SIDE_CHANNEL_PORT"] = str(free_ports(1, self.host)[0])
        return shown

    def _verify(self) -> dict[str, Any]:
        """Prove the processes will import the build's code (see eval.stacks.verify); the probe's record."""
        return dict(verify_launch(self.build, {**os.environ, **self._vllm_env()}).__dict__)

    def start(self) -> None:
        """Verify the build, then start the vLLM processes (the router starts once they are ready)."""
        if self.procs:
            return
        try:
            self._probe = self._verify()
        except Exception as e:
            raise StackError(f"{self.cohort}: {e}") from e
        mapping = self._mapping()
        self._launched_at = now_iso()
        try:
            for cmd in self.commands:
                self.procs.append(self._process(cmd, mapping, self._env_for(cmd)))
        except Exception:
            self._release_gpus()
            raise
        for p in self.procs:
            if p.role != "router":
                p.start()

    # ------------------------------------------------------------ readiness

    def _fail(self, p: ManagedProcess, why: str) -> StackError:
        return StackError(f"{self.cohort}: {p.key} {why}", command=p.shell(), log_tail=p.log_tail())

    def _wait(self, procs: list[ManagedProcess], deadline: float) -> None:
        pending = list(procs)
        with httpx.Client(timeout=5.0) as client:
            while pending:
                for p in list(pending):
                    code = p.exit_code()
                    if code is not None:
                        raise self._fail(p, f"exited with code {code} while starting")
                    url = f"http://{self.host}:{p.port}"
                    if _answers(url, "/health", client) and _answers(url, "/v1/models", client):
                        pending.remove(p)
                if pending and time.monotonic() > deadline:
                    raise self._fail(pending[0], "was not ready in time")
                if pending:
                    time.sleep(1.0)

    def wait_ready(self, timeout_s: float | None = None) -> None:
        deadline = time.monotonic() + (timeout_s or self.startup_timeout_s)
        self._wait([p for p in self.procs if p.role != "router"], deadline)
        for r in (p for p in self.procs if p.role == "router"):
            self._start_router(r, deadline)
        self._write_provenance()
        self._watch()

    def _start_router(self, r: ManagedProcess, deadline: float, attempts: int = 3) -> None:
        """Start a router once the workers are ready. vllm-router binds its Prometheus exporter to 29000 unless told
        otherwise, so a second P/D stack on the machine (the next cohort's, started early) would die at start-up:
        specqual gives it a port picked just now (one picked when the stack was planned was taken a minute later
        on a busy machine), and retries a start that dies on a taken address ("Address already in use", for the
        Prometheus exporter or the router's own port) with fresh ones; the stack's URL follows `r.port`."""
        argv = list(r.argv)
        ours = Path(argv[0]).name == "vllm-router" and "--prometheus-port" not in argv
        for attempt in range(attempts):
            if r.popen is None:
                if attempt and "--port" in argv:  # the address in use may be the router's own port
                    r.port = free_ports(1, self.host)[0]
                    argv[argv.index("--port") + 1] = str(r.port)
                if ours:
                    r.argv = [*argv, "--prometheus-port", str(free_ports(1, self.host)[0])]
                else:
                    r.argv = list(argv)
                r.start()
            try:
                self._wait([r], deadline)
                return
            except StackError:
                if attempt + 1 == attempts or "Address already in use" not in r.log_tail():
                    raise
                r.popen = None

    def _watch(self) -> None:
        """Restart a process that dies from now on (eval.stacks.watchdog), up to `max_restarts` times."""
        if self.watchdog is not None:
            return
        self.watchdog = Watchdog(
            self.procs,
            lambda p: f"http://{self.host}:{p.port}",
            self.out_dir / EVENTS_FILE,
            stack_id=self.stack_id,
            max_restarts=self.max_restarts,
            startup_timeout_s=self.startup_timeout_s,
            poll_s=self.watch_poll_s,
            on_restart=self._write_provenance,
        )
        self.watchdog.start()

    def alive(self) -> bool:
        """Every process runs, or the watchdog is restarting one (and has not given up). `gave_up` is set before the
        `gave_up` event is written and `recovering` is cleared only after it: checking both keeps a reader that saw
        the event from finding the stack alive in between (the docker tier's watchdog test once did)."""
        if self.watchdog is not None and self.watchdog.recovering and not self.watchdog.gave_up:
            return True
        return bool(self.procs) and all(p.running() for p in self.procs)

    # ------------------------------------------------------------ stop

    def _release_gpus(self) -> None:
        if self.gpu_pool is not None and self._gpus:
            self.gpu_pool.release(self._gpus)
            self._gpus = []

    def stop(self) -> None:
        if self._stopped_at is not None or not self.procs:
            return
        if self.watchdog is not None:
            self.watchdog.stop()  # before the processes: a stop is not a death to recover from
        for p in reversed(self.procs):  # router first, then the workers it talks to
            p.stop()
        self._stopped_at = now_iso()
        self._release_gpus()
        if self._stack_json is not None:
            self._write_provenance()

    # ------------------------------------------------------------ provenance

    def provenance(self) -> dict[str, Any]:
        """The stack.json record as JSON (the Stack protocol's provenance)."""
        return self.stack_record().record()

    def stack_record(self) -> StackRecord:
        b = self.build
        probe = self._probe
        commands = [
            LaunchCommand(
                role=p.role,
                index=p.index,
                argv=redact_argv(p.argv),
                env=redact_env(p.env_shown),
                pid=p.pid,
                port=p.port,
                log=str(p.log_path),
            )
            for p in self.procs
        ]
        return StackRecord(
            cohort=self.cohort,
            launched_at=self._launched_at,
            stopped_at=self._stopped_at,
            build=b.name,
            vllm_version=probe.get("vllm_version") or b.vllm_version,
            vllm_path=str(probe.get("vllm_path") or b.vllm_path),
            wheel_sha256=b.wheel_sha256,
            patches=[PatchFile.model_validate(p.record()) for p in b.patches],
            patched_files=probe.get("hashes", {}),
            commands=commands,
            env=safe_env({**os.environ, **self._vllm_env()}),
            python=probe.get("python"),
            torch=probe.get("torch") or b.torch,
            gpus=gpu_inventory(),
            host=host_name(),
            base_url=self.base_url if self.procs else None,
            slurm=None,
            stack_id=self.stack_id,
        )

    def _write_provenance(self) -> None:
        if not self.write_stack_json:
            return
        if self._stack_json is None:
            self._stack_json = stack_json_path(self.out_dir)
        atomic_write_json(self._stack_json, self.provenance())
