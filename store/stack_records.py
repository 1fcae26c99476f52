"""Typed records of a cohort's stack (results/README.md): what ran, how it was started, what happened to it.

`<cohort>/stack.json` (StackRecord; `stack-<n>.json` for a relaunch), `<cohort>/server_events.jsonl` (ServerEvent,
one line per watchdog step), `<cohort>/slurm.json` (SlurmJobs) and the job steps' endpoint files under
`<cohort>/slurm/endpoints/<job>/<key>.json` (Endpoint).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from store.layout import SCHEMA_VERSION


class PatchFile(BaseModel):
    """A patch applied to a build."""

    model_config = ConfigDict(extra="forbid")

    file: str = Field(description="Path of the patch file.")
    sha256: str = Field(description="sha256 of the patch file.")
    reverse: bool = Field(description="Whether it was applied in reverse (a revert).")


class Gpu(BaseModel):
    """One GPU of the host, from nvidia-smi."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="The GPU's product name.")
    driver: str = Field(description="The driver version.")
    memory_mib: int | None = Field(description="Total memory in MiB (null: not reported).")


class LaunchCommand(BaseModel):
    """One process of the stack as it was started (secrets redacted)."""

    model_config = ConfigDict(extra="forbid")

    role: str | None = Field(description="worker, prefill, decode or router.")
    index: int | None = Field(description="The process's index within its role.")
    argv: list[str] | None = Field(description="The command line, secrets redacted.")
    env: dict[str, str] = Field(description="Variables set for the process, secrets redacted.")
    pid: int | None = Field(description="Process id (on its node).")
    port: int | None = Field(description="The port it listens on.")
    log: str | None = Field(description="Path of its log.")
    node: str | None = Field(None, description="The Slurm node it ran on (Slurm stacks only).")


class SlurmEndpointSummary(BaseModel):
    """Where a Slurm job step listens (the part of its Endpoint that stack.json keeps)."""

    model_config = ConfigDict(extra="forbid")

    node: str | None = Field(description="The Slurm node.")
    host: str | None = Field(description="The address other steps reach it at.")
    port: int | None = Field(description="The port.")
    url: str | None = Field(description="Its base URL.")
    cuda_visible_devices: str | None = Field(description="CUDA_VISIBLE_DEVICES of the step.")


class SlurmStackInfo(BaseModel):
    """The Slurm job of a Slurm stack (`stack.json`'s `slurm`)."""

    model_config = ConfigDict(extra="forbid")

    job_id: str | None = Field(description="The job id (null: never submitted).")
    job_name: str | None = Field(description="The job name.")
    nodes: list[str] = Field(description="The job's nodes.")
    batch_host: str | None = Field(description="The node that ran the batch script.")
    partition: str | None = Field(description="The partition.")
    state: str | None = Field(description="The job's last known state.")
    script: str | None = Field(description="Path of the sbatch script.")
    endpoints: dict[str, SlurmEndpointSummary] = Field(description="Process key -> where it listens.")


class StackRecord(BaseModel):
    """`<cohort>/stack.json`: provenance of one launch of the cohort's stack."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = Field(SCHEMA_VERSION, description="Version of the results-directory schema.")
    cohort: str = Field(description="The cohort.")
    launched_at: str | None = Field(description="ISO time the stack was launched.")
    stopped_at: str | None = Field(description="ISO time it was stopped; null while it runs.")
    build: str | None = Field(None, description="The build's name in the cohort file (older records lack it).")
    vllm_version: str | None = Field(description="vLLM version the processes import.")
    vllm_path: str | None = Field(description="Where the imported vllm package lives.")
    wheel_sha256: str | None = Field(description="sha256 of the wheel the environment was built from.")
    patches: list[PatchFile] = Field(description="Patches applied by the overlay.")
    patched_files: dict[str, str] = Field(description="Patched file -> sha256, as the processes see them.")
    commands: list[LaunchCommand] = Field(description="The stack's processes.")
    env: dict[str, str] = Field(description="Relevant variables of the environment (VLLM_, CUDA_ ...), no secrets.")
    python: str | None = Field(description="Python version of the stack's environment.")
    torch: str | None = Field(description="torch version of the stack's environment.")
    gpus: list[Gpu] = Field(description="GPUs of the host (empty for Slurm stacks: see slurm.endpoints).")
    host: str = Field(description="Host name of the launching machine.")
    base_url: str | None = Field(description="The stack's OpenAI-compatible base URL.")
    slurm: SlurmStackInfo | None = Field(description="The Slurm job, for a Slurm stack.")
    stack_id: str | None = Field(None, description="Id of this launch (older records lack it).")

    def record(self) -> dict[str, Any]:
        """The JSON object: `node` of a command only where the stack ran on Slurm."""
        data = self.model_dump(mode="json")
        for cmd in data["commands"]:
            if cmd.get("node") is None:
                cmd.pop("node", None)
        return data


class ServerEvent(BaseModel):
    """One line of `<cohort>/server_events.jsonl`: a watchdog step (a death, a restart, giving up)."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = Field(SCHEMA_VERSION, description="Version of the results-directory schema.")
    time: str = Field(description="ISO time of the event.")
    stack_id: str = Field(description="The launch it belongs to.")
    event: Literal["died", "restarted", "gave_up"] = Field(description="What happened.")
    process: str = Field(description="The process key (role.index).")
    deaths: int = Field(description="Deaths of this launch so far.")
    restarts: int = Field(description="Restarts of this launch so far.")
    max_restarts: int = Field(description="Restarts allowed.")
    exit_code: int | None = Field(None, description="The dead process's exit code (died, gave_up; null: hung).")
    log_tail: str | None = Field(None, description="The last lines of its log (died, gave_up).")
    ready_s: float | None = Field(None, description="Seconds from detection to ready again (restarted).")


class SlurmJob(BaseModel):
    """One Slurm job of a cohort; the submitter fills fields in as it learns them."""

    model_config = ConfigDict(extra="forbid")

    job_id: str = Field(description="The Slurm job id.")
    submitted_at: str = Field(description="ISO time it was recorded first.")
    updated_at: str | None = Field(None, description="ISO time of the last update.")
    kind: Literal["stack", "rollout"] | None = Field(None, description="A stack job or a rollout array.")
    state: str | None = Field(None, description="The last state seen (PENDING, RUNNING, ACTIVE, ENDED ...).")
    script: str | None = Field(None, description="Path of the sbatch script.")
    nodes: list[str] | None = Field(None, description="The job's nodes (stack jobs).")
    base_url: str | None = Field(None, description="The stack's base URL once ready (stack jobs).")
    stopped_at: str | None = Field(None, description="ISO time the stack was stopped (stack jobs).")
    submission: int | None = Field(None, description="The rollout array's submission number (rollout arrays).")
    tasks: int | None = Field(None, description="Array tasks (rollout arrays).")
    shards_file: str | None = Field(None, description="Path of the array's shard plan (rollout arrays).")
    task_states: dict[str, str] | None = Field(None, description="Array task id -> state (rollout arrays).")


class SlurmJobs(BaseModel):
    """`<cohort>/slurm.json`: the cohort's Slurm jobs, for `specqual status` and resume."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = Field(SCHEMA_VERSION, description="Version of the results-directory schema.")
    cohort: str = Field(description="The cohort.")
    jobs: list[SlurmJob] = Field(default_factory=list, description="Jobs in the order they were submitted.")


class Endpoint(BaseModel):
    """`<cohort>/slurm/endpoints/<job>/<key>.json`: where one job step listens, published before it starts."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = Field(SCHEMA_VERSION, description="Version of the results-directory schema.")
    key: str = Field(description="The process key, role.index.")
    role: str = Field(description="The process's role.")
    index: int = Field(description="Its index within the role.")
    node: str = Field(description="SLURMD_NODENAME, else the host name.")
    hostname: str = Field(description="The host name.")
    host: str = Field(description="The address other steps reach it at.")
    bind: str = Field(description="The address it binds.")
    port: int = Field(description="The port.")
    url: str = Field(description="Its base URL.")
    job_id: str | None = Field(description="SLURM_JOB_ID.")
    step_id: str | None = Field(description="SLURM_STEP_ID.")
    cuda_visible_devices: str | None = Field(description="CUDA_VISIBLE_DEVICES of the step.")
    pid: int = Field(description="The step's process id.")
    argv: list[str] = Field(description="The rendered command line, secrets redacted.")
    log: str = Field(description="Path of its log.")
    started_at: float = Field(description="Unix time it published the record.")
