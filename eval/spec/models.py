"""The cohort file: one pydantic model tree, validated in full before anything starts.

A cohort file declares what is compared (builds, speculative settings, topologies and any other named factor),
everything held fixed (model, server arguments, sampling, workloads), the matrix of cohorts, and which cohort is
the control of which. `eval.spec.load` reads and merges files; `eval.spec.matrix` expands the matrix.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field, PrivateAttr, field_validator, model_validator

from eval.spec.base import NAME_PATTERN, SCHEMA_VERSION, Name, ScalarArg, ServerArgValue, Strict
from eval.spec.serving import (
    Build,
    ExecutorSpec,
    Patch,
    PDTopology,
    Router,
    ServerSpec,
    SingleTopology,
    SlurmOptions,
    Speculative,
    Topology,
    WorkerGroup,
)
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

__all__ = [  # the serving and workload blocks and shared pieces stay importable from here
    "DEFAULT_CANARY_MODES",
    "NAME_PATTERN",
    "SCHEMA_VERSION",
    "AgentSpec",
    "Build",
    "CanaryMode",
    "CanaryWorkload",
    "ExecutorSpec",
    "GraderSpec",
    "Name",
    "PDTopology",
    "Patch",
    "Router",
    "SWEBenchWorkload",
    "SandboxSpec",
    "ScalarArg",
    "ServerArgValue",
    "ServerSpec",
    "SingleTopology",
    "SlurmOptions",
    "Speculative",
    "Strict",
    "Topology",
    "WorkerGroup",
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
    early_stop: bool = Field(
        True, description="stop a cohort's rollouts once the sequential test decides its comparison (--no-early-stop)"
    )
    early_stop_every: int = Field(10, ge=1, description="ask the sequential test every N finished units")
    skip_rollouts_on_canary_fail: bool = Field(
        False, description="a cohort whose canary failed (diverged or the server failed) skips its SWE-bench rollouts"
    )


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
    executor: ExecutorSpec = ExecutorSpec()
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
