"""`SlurmStack`: a cohort's stack as one Slurm job, satisfying `eval.protocols.Stack`.

start: verify the build on this host (shared file system), write and `sbatch` the stack script. wait_ready:
watch the job (pending is fine; a job that ends fails the launch at once with its log tails), read the
endpoint files its processes publish, then poll /health and /v1/models of every worker, then the router.
stop: `scancel`, wait until Slurm lets go. Provenance is `stack.json` with `slurm` = job id, nodes, script.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import httpx

from eval.executors.slurm import cluster
from eval.executors.slurm.record import upsert_job
from eval.executors.slurm.scripts import StackJob, secret_env, stack_script
from eval.secrets import redact_env
from eval.stacks.builds import BuildEnv
from eval.stacks.lifecycle import StartStop
from eval.stacks.local import StackError
from eval.stacks.process import now_iso
from eval.stacks.provenance import host_name, safe_env, stack_json_path
from eval.store.atomic import atomic_write_text
from store.record_io import read_record
from store.stack_records import (
    Endpoint,
    LaunchCommand,
    PatchFile,
    SlurmEndpointSummary,
    SlurmStackInfo,
    StackRecord,
)

ENDPOINT_FIELDS = ("node", "host", "port", "url", "cuda_visible_devices")


class SlurmStackError(StackError):
    """The stack job could not start, died, or was not ready in time; the message has the log tails."""


def log_tail(path: Path, lines: int = 30) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return f"--- {path} (last {lines} lines)\n" + "\n".join(text.splitlines()[-lines:])


def _answers(client: httpx.Client, url: str) -> bool:
    try:
        return all(client.get(url + p).status_code == 200 for p in ("/health", "/v1/models"))
    except httpx.HTTPError:
        return False


class SlurmStack(StartStop):
    """See the module docstring. Build with `SlurmExecutor.stack`; use as a context manager."""

    def __init__(
        self, job: StackJob, build: BuildEnv | None, *, startup_timeout_s: float = 1800.0, poll_s: float = 2.0
    ) -> None:
        self.job = job
        self.build = build
        self.startup_timeout_s = startup_timeout_s
        self.poll_s = poll_s
        self.job_id: str | None = None
        self.script_path: Path | None = None
        self.endpoints: dict[str, Endpoint] = {}
        self.info: cluster.JobInfo | None = None
        self._probe: dict[str, Any] = {}
        self._launched_at: str | None = None
        self._stopped_at: str | None = None
        self._stack_json: Path | None = None

    @property
    def cohort_dir(self) -> Path:
        return self.job.cohort_dir

    @property
    def log_dir(self) -> Path:
        return self.job.cohort_dir / "logs"

    def command_lines(self) -> list[str]:
        """Each process's command line (secrets redacted), with the node it runs on once the job started."""
        nodes = {k: e.node for k, e in self.endpoints.items()}
        return [c.shell() + (f"  # on {nodes[c.key]}" if nodes.get(c.key) else "") for c in self.job.commands]

    # ------------------------------------------------------------ addresses

    def _url(self, key: str) -> str:
        if key not in self.endpoints:
            raise SlurmStackError(f"{self.job.cohort}: {key} has not published its endpoint yet")
        return self.endpoints[key].url

    @property
    def base_url(self) -> str:
        entry = self.job.routers[0] if self.job.routers else self.job.commands[0]
        return self._url(entry.key)

    @property
    def metrics_urls(self) -> list[str]:
        return [self._url(c.key) + "/metrics" for c in self.job.workers]

    # ------------------------------------------------------------ start

    def start(self) -> None:
        if self.job_id is not None:
            return
        if self.build is not None and self.build.python is not None:
            from eval.stacks.verify import verify_launch

            try:
                self._probe = verify_launch(self.build, {**os.environ, **self.job.env}).__dict__
            except Exception as e:
                raise SlurmStackError(f"{self.job.cohort}: {e}") from e
        slurm_dir = self.cohort_dir / "slurm"
        n = len(list(slurm_dir.glob("stack-*.sbatch"))) if slurm_dir.is_dir() else 0
        self.script_path = slurm_dir / f"stack-{n}.sbatch"
        atomic_write_text(self.script_path, stack_script(self.job))
        (self.cohort_dir / "logs").mkdir(parents=True, exist_ok=True)
        self.job_id = cluster.submit(self.script_path, env=secret_env(self.job))  # secrets: not in the script
        self._launched_at = now_iso()
        upsert_job(self.cohort_dir, self.job_id, kind="stack", script=str(self.script_path), state="PENDING")

    # ------------------------------------------------------------ readiness

    def _logs(self) -> str:
        paths = [self.cohort_dir / "logs" / f"slurm-stack-{self.job_id}.out"]
        paths += [self.cohort_dir / "logs" / f"{c.role}.{c.index}.log" for c in self.job.commands]
        return "\n".join(t for t in (log_tail(p) for p in paths) if t)

    def _fail(self, why: str) -> SlurmStackError:
        return SlurmStackError(f"{self.job.cohort}: stack job {self.job_id} {why}\n{self._logs()}")

    def _refresh(self) -> cluster.JobInfo | None:
        assert self.job_id is not None
        jobs = cluster.show_jobs(self.job_id)
        self.info = jobs[0] if jobs else None
        return self.info

    def _read_endpoints(self) -> None:
        directory = self.cohort_dir / "slurm" / "endpoints" / str(self.job_id)
        for cmd in self.job.commands:
            rec = read_record(directory / f"{cmd.key}.json", Endpoint)
            if rec is not None:
                self.endpoints[cmd.key] = rec

    def _ready(self, client: httpx.Client) -> bool:
        self._read_endpoints()
        for group in (self.job.workers, self.job.routers):
            for cmd in group:
                if cmd.key not in self.endpoints or not _answers(client, self._url(cmd.key)):
                    return False
        return True

    def wait_ready(self, timeout_s: float | None = None) -> None:
        """Block until every process answers; raise (and cancel the job) if it ends or time runs out."""
        self.start()
        deadline = time.monotonic() + (timeout_s or self.startup_timeout_s)
        with httpx.Client(timeout=5.0, trust_env=False) as client:
            while True:
                info = self._refresh()
                if info is None or not info.active:
                    state = info.state if info else "gone (Slurm no longer knows it)"
                    raise self._fail(f"ended while starting: {state} {info.reason if info else ''}".rstrip())
                if info.state == "RUNNING" and self._ready(client):
                    break
                if time.monotonic() > deadline:
                    self.stop()
                    raise self._fail(f"was not ready in time (state {info.state}, reason {info.reason})")
                time.sleep(self.poll_s)
        upsert_job(self.cohort_dir, str(self.job_id), state="RUNNING", nodes=info.nodes, base_url=self.base_url)
        self._write_provenance()

    def alive(self) -> bool:
        if self.job_id is None or self._stopped_at is not None:
            return False
        info = self._refresh()
        return info is not None and info.state == "RUNNING"

    # ------------------------------------------------------------ stop

    def stop(self) -> None:
        """`scancel` the job and wait (up to a minute) until Slurm reports it ended; idempotent."""
        if self.job_id is None or self._stopped_at is not None:
            return
        cluster.cancel([self.job_id])
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            info = self._refresh()
            if info is None or not info.active:
                break
            time.sleep(0.5)
        self._stopped_at = now_iso()
        state = self.info.state if self.info else "gone"
        upsert_job(self.cohort_dir, self.job_id, state=state, stopped_at=self._stopped_at)
        if self._stack_json is not None:
            self._write_provenance()

    # ------------------------------------------------------------ provenance

    def slurm_record(self) -> SlurmStackInfo:
        info = self.info
        return SlurmStackInfo(
            job_id=self.job_id,
            job_name=info.name if info else None,
            nodes=info.nodes if info else [],
            batch_host=info.batch_host if info else None,
            partition=info.fields.get("Partition") if info else None,
            state=info.state if info else None,
            script=str(self.script_path) if self.script_path else None,
            endpoints={
                k: SlurmEndpointSummary.model_validate(v.model_dump(include=set(ENDPOINT_FIELDS)))
                for k, v in self.endpoints.items()
            },
        )

    def provenance(self) -> dict[str, Any]:
        """The stack.json record as JSON (the Stack protocol's provenance)."""
        return self.stack_record().record()

    def stack_record(self) -> StackRecord:
        b, probe = self.build, self._probe
        commands = [
            LaunchCommand(
                role=e.role,
                index=e.index,
                argv=e.argv,
                env=redact_env(self.job.env),
                pid=e.pid,
                port=e.port,
                log=e.log,
                node=e.node,
            )
            for e in self.endpoints.values()
        ]
        return StackRecord(
            cohort=self.job.cohort,
            launched_at=self._launched_at,
            stopped_at=self._stopped_at,
            build=b.name if b else None,
            vllm_version=probe.get("vllm_version") or (b.vllm_version if b else None),
            vllm_path=str(probe.get("vllm_path") or (b.vllm_path if b else None)),
            wheel_sha256=b.wheel_sha256 if b else None,
            patches=[PatchFile.model_validate(p.record()) for p in b.patches] if b else [],
            patched_files=probe.get("hashes", {}),
            commands=commands,
            env=safe_env({**os.environ, **self.job.env}),
            python=probe.get("python"),
            torch=probe.get("torch") or (b.torch if b else None),
            gpus=[],  # the GPUs are on the job's nodes: see slurm.endpoints.*.cuda_visible_devices
            host=host_name(),
            base_url=self.base_url if self.endpoints else None,
            slurm=self.slurm_record(),
        )

    def _write_provenance(self) -> None:
        if self._stack_json is None:
            self._stack_json = stack_json_path(self.cohort_dir)
        from eval.store.atomic import atomic_write_json

        atomic_write_json(self._stack_json, self.provenance())
