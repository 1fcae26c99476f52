"""Typed records that the GPU node script (scripts/gpu/qualify_node.py) adds to a run directory.

`<run>/placement.json` (GpuPlacement), `<run>/side-channels.json` (SideChannels), `<run>/handshakes.json`
(Handshakes), `<run>/<cohort>/smoke.json` (SmokeReply), `<run>/nixl.json` (NixlManifest, the slim NIXL tarball's
manifest) and `<run>/timings.json` (NodeTimings). The run's bundle is kept as `<run>/bundle.json`
(store.cache_records.BundleManifest).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from store.layout import SCHEMA_VERSION
from store.stack_records import Gpu


class GpuProcess(BaseModel):
    """A process on a GPU (nvidia-smi), matched to the stack worker whose process group it is in."""

    model_config = ConfigDict(extra="forbid")

    pid: int = Field(description="The process id.")
    gpu_uuid: str = Field(description="The GPU it runs on.")
    used_mib: int | None = Field(description="GPU memory it holds, MiB.")
    cohort: str | None = Field(None, description="The cohort of its stack (null: no stack of this run).")
    worker: str | None = Field(None, description="Its worker, role.index (null: no stack of this run).")


class GpuPlacement(BaseModel):
    """`<run>/placement.json`: which GPU runs which worker."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = Field(SCHEMA_VERSION, description="Version of the record's schema.")
    gpu_uuids: list[str] = Field(description="GPUs in use.")
    gpus_used: int = Field(description="How many.")
    processes: list[GpuProcess] = Field(description="Every GPU process.")


class SideChannel(BaseModel):
    """One P/D worker's NIXL side channel."""

    model_config = ConfigDict(extra="forbid")

    worker: str = Field(description="cohort/role.index.")
    pid: int | None = Field(description="The worker's process id.")
    side_channel_port: int | None = Field(description="VLLM_NIXL_SIDE_CHANNEL_PORT (null: not set).")
    listeners: list[int] = Field(description="Pids listening on that port.")
    own: bool = Field(description="Whether only the worker's own process group listens there.")


class SideChannels(BaseModel):
    """`<run>/side-channels.json`: each pair's NIXL handshake isolated on its own port."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = Field(SCHEMA_VERSION, description="Version of the record's schema.")
    ok: bool = Field(description="Whether every side channel is the worker's own and distinct.")
    problems: list[str] = Field(description="What did not hold.")
    workers: list[SideChannel] = Field(description="Every P/D worker.")


class Handshake(BaseModel):
    """One decode worker's NIXL handshakes, from its log."""

    model_config = ConfigDict(extra="forbid")

    worker: str = Field(description="cohort/decode.index.")
    passed: int = Field(description="Handshakes the log says passed.")
    failures: list[str] = Field(description="Failure messages found in the log.")


class Handshakes(BaseModel):
    """`<run>/handshakes.json`: after one request per pair, every decode worker's handshake passed."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = Field(SCHEMA_VERSION, description="Version of the record's schema.")
    ok: bool = Field(description="Whether every decode worker passed and none failed.")
    problems: list[str] = Field(description="What did not hold.")
    workers: list[Handshake] = Field(description="Every decode worker.")


class SmokeReply(BaseModel):
    """`<run>/<cohort>/smoke.json`: one greedy completion through a P/D router."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = Field(SCHEMA_VERSION, description="Version of the record's schema.")
    prompt_tokens: int | None = Field(None, description="usage.prompt_tokens.")
    cached_tokens: int | None = Field(None, description="usage.prompt_tokens_details.cached_tokens.")
    error: str | None = Field(None, description="Why the request failed (null: it answered).")

    def record(self) -> dict[str, Any]:
        """The JSON object: the usage fields, or the error."""
        return self.model_dump(mode="json", exclude_none=True)


class NixlManifest(BaseModel):
    """`manifest.json` of a slim NIXL tarball (scripts/gpu/slim_nixl.py), kept as `<run>/nixl.json`."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = Field(SCHEMA_VERSION, description="Version of the record's schema.")
    tarball: str = Field(description="The tarball's file name.")
    tarball_sha256: str = Field(description="Its sha256.")
    source_wheels: dict[str, str] = Field(description="The NIXL wheels it was cut from -> sha256.")
    files: int = Field(description="Files in the tarball.")
    unpacked_bytes: int = Field(description="Their size unpacked.")
    system_libraries: list[str] = Field(description="Libraries it expects from the system.")


class AcceptanceSummary(BaseModel):
    """Speculative acceptance over one workload's snapshots (store.acceptance); empty when nothing was drafted."""

    model_config = ConfigDict(extra="forbid")

    drafts: int | None = Field(None, description="Drafts proposed (counter growth).")
    draft_tokens: int | None = Field(None, description="Draft tokens proposed.")
    accepted_tokens: int | None = Field(None, description="Draft tokens accepted.")
    acceptance_rate: float | None = Field(None, description="accepted / proposed draft tokens.")
    mean_acceptance_length: float | None = Field(None, description="1 + accepted tokens per draft.")
    per_position_rate: list[float] | None = Field(None, description="Acceptance rate per draft position.")

    def record(self) -> dict[str, Any]:
        """The JSON object: only what was measured."""
        return self.model_dump(mode="json", exclude_none=True)


class NodeTimings(BaseModel):
    """`<run>/timings.json`: what a GPU node run took, filled in as the stages run (null: not reached)."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = Field(SCHEMA_VERSION, description="Version of the record's schema.")
    model_generation_s: float = Field(description="Seconds to generate (or find) the model.")
    builds_s: float = Field(description="Seconds to build (or find) every build's overlay.")
    gpus: list[Gpu] = Field(description="GPUs of the node.")
    cold_start_s: dict[str, float] | None = Field(None, description="Cohort -> seconds to first ready.")
    start_failed: list[str] | None = Field(None, description="Cohorts whose stack did not start.")
    probe_wall_s: dict[str, float] | None = Field(None, description="Cohort -> seconds of canary probing.")
    serve_s: float | None = Field(None, description="Seconds the stacks served in all.")
    probes: int | None = Field(None, description="Canary probes run.")
    probing_s: float | None = Field(None, description="Seconds of probing, all cohorts at once.")
    probes_per_min: float | None = Field(None, description="Probes per minute.")
    acceptance: dict[str, AcceptanceSummary] | None = Field(None, description="Cohort -> canary acceptance.")
    rollout_acceptance: dict[str, AcceptanceSummary] | None = Field(None, description="Cohort -> rollout acceptance.")
    rollouts: dict[str, dict[str, Any]] | None = Field(None, description="Cohort -> its rollout summary (counts).")
    rollouts_s: float | None = Field(None, description="Seconds of rollouts.")
    verdicts: dict[str, dict[str, str | None]] | None = Field(None, description="Cohort -> canary verdict, reason.")
    warm_start_s: dict[str, float] | None = Field(None, description="Cohort -> seconds to ready, warm.")
    total_s: float | None = Field(None, description="Seconds of the whole node run.")
