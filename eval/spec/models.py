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
    seed: int = Field(0, description="seed of the generator: the same seed gives the same weights")
    options: dict[str, Any] = Field(
        default_factory=dict, description="generator-specific options (see the generator in eval/models)"
    )


class ModelSpec(Strict):
    path: str | None = Field(None, description="model directory or hub-style name available offline")
    generate: GeneratedModel | None = Field(
        None, description="make the model locally instead of `path` (no downloads): a generator and its seed"
    )
    served_name: str = Field(
        "model", description="model name the server answers to (--served-model-name) and requests use"
    )
    tokenizer: str | None = Field(None, description="tokenizer directory or name; null: the model's own")
    dtype: Literal["auto", "float32", "float16", "bfloat16"] = Field(
        "auto", description="--dtype of the server: auto | float32 | float16 | bfloat16"
    )
    max_model_len: int | None = Field(None, gt=0, description="--max-model-len; null: the model's own limit")
    tool_call_parser: str | None = Field(
        None, description="--tool-call-parser (also turns on --enable-auto-tool-choice); needed by the agent"
    )
    reasoning_parser: str | None = Field(
        None, description="--reasoning-parser for models that think before answering; null: none"
    )
    chat_template: str | None = Field(None, description="path to a Jinja chat template")
    chat_template_kwargs: dict[str, Any] = Field(
        default_factory=dict, description="--default-chat-template-kwargs, e.g. {enable_thinking: true}"
    )
    trust_remote_code: bool = Field(
        False, description="--trust-remote-code for models whose code ships with the weights"
    )

    @model_validator(mode="after")
    def _one_source(self) -> ModelSpec:
        if (self.path is None) == (self.generate is None):
            raise ValueError("give exactly one of model.path or model.generate")
        return self


# ---------------------------------------------------------------- other factors


class FactorValue(Strict):
    label: str | None = Field(None, description="label of the value in reports; default: its name")
    server_args: dict[str, ServerArgValue] = Field(
        default_factory=dict, description="server flags this value sets (dict -> --kebab-case flags)"
    )
    env: dict[str, str] = Field(
        default_factory=dict, description="environment variables this value sets for the server"
    )


class Factor(Strict):
    column: str | None = Field(None, description="column title in reports")
    values: dict[Name, FactorValue] = Field(description="value name -> what the value sets")

    @field_validator("values")
    @classmethod
    def _not_empty(cls, v: dict[str, FactorValue]) -> dict[str, FactorValue]:
        if not v:
            raise ValueError("a factor needs at least one value")
        return v


class Sampling(Strict):
    temperature: float = Field(0.0, ge=0, description="sampling temperature (0: greedy)")
    top_p: float = Field(1.0, gt=0, le=1, description="nucleus sampling mass")
    top_k: int | None = Field(None, description="top-k sampling; null: off")
    seed: int = Field(0, description="base seed of the requests")
    seed_policy: Literal["fixed", "per_unit", "none"] = Field(
        "per_unit",
        description="fixed: every request uses `seed`; per_unit: a stable hash of (seed, instance, repeat); "
        "none: no seed",
    )


# ---------------------------------------------------------------- matrix, comparisons, policy


class CohortEntry(Strict):
    """One cohort of an explicit matrix list: a value per factor plus optional own settings."""

    name: Name | None = Field(None, description="cohort name; default: the varying factors' value names joined by -")
    label: str | None = Field(None, description="row label in reports; default: the name")
    build: Name | None = Field(None, description="value of the build factor")
    speculative: Name | None = Field(None, description="value of the speculative factor")
    topology: Name | None = Field(None, description="value of the topology factor")
    model: Name | None = Field(None, description="a name from `models` (default: the top-level `model`)")
    workloads: list[WorkloadName] | None = Field(
        None, min_length=1, description="workloads this cohort runs (default: every enabled workload)"
    )
    factors: dict[Name, Name] = Field(default_factory=dict, description="values of the other named factors")
    server_args: dict[str, ServerArgValue] = Field(
        default_factory=dict, description="more server flags of this cohort only"
    )
    env: dict[str, str] = Field(
        default_factory=dict, description="more server environment variables of this cohort only"
    )


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
    cohort: Name = Field(description="the cohort under test")
    control: Name = Field(description="its control: the same stack but for `differs_in`")
    differs_in: list[Name] = Field(
        default_factory=lambda: ["speculative"],
        description="factors (or `model`) in which the cohort may differ from its control",
    )


class Policy(Strict):
    non_inferiority_margin: float = Field(
        0.03, ge=0, le=1, description="largest resolve-rate drop against the control that still passes"
    )
    corruption_ceiling: float = Field(
        0.02, ge=0, le=1, description="max share of corrupted trajectories; with a control, max excess over its share"
    )
    max_infra_rate: float = Field(
        0.05,
        ge=0,
        le=1,
        description="largest share of units lost to infrastructure errors before a cohort is INCONCLUSIVE",
    )
    canary_must_be_clean: bool = Field(
        True, description="a corrupted canary fails the cohort whatever the rollouts say"
    )
    alpha: float = Field(
        0.05, gt=0, lt=1, description="error rate of the sequential tests and the confidence intervals"
    )
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
    schema_version: Literal[1] = Field(1, description="version of the cohort-file schema; only 1 exists")
    name: Name = Field(
        description="the file's name: run ids and the report title start with it (letters, digits, _ . -)"
    )
    description: str = Field(
        "", description="free text: what the file qualifies and why (shown in the cohort-file reference)"
    )
    model: ModelSpec = Field(description="the default model (named `default`): cohorts that name none use it")
    models: dict[Name, ModelSpec] = Field(default_factory=dict, description="more models, chosen per cohort entry")
    builds: dict[Name, Build] = Field(
        description="factor `build`: name -> a vLLM source (pip, wheel, env or image) plus ordered patches"
    )
    speculative: dict[Name, Speculative] = Field(
        default_factory=lambda: {"off": Speculative(label="Off")},
        description="factor `speculative`: name -> a --speculative-config (method null: speculation off)",
    )
    topologies: dict[Name, Topology] = Field(
        default_factory=_default_topologies,
        description="factor `topology`: name -> one server (single) or prefill/decode workers behind a router (pd)",
    )
    factors: dict[Name, Factor] = Field(
        default_factory=dict,
        description="any other named factor: its values set server arguments and/or environment variables",
    )
    server: ServerSpec = Field(
        ServerSpec(), description="server settings common to every cohort (flags, environment, device, start-up limits)"
    )
    executor: ExecutorSpec = Field(
        ExecutorSpec(), description="where stacks and rollouts run: this host (local) or Slurm jobs"
    )
    sampling: Sampling = Field(Sampling(), description="sampling parameters of every request the workloads send")
    workloads: Workloads = Field(
        Workloads(),
        description="what runs against each stack: the canary, SWE-bench rollouts, the soak and sampled checks",
    )
    matrix: Matrix = Field(
        Matrix(), description="which cohorts exist: a product of factor values, or an explicit list, plus report labels"
    )
    comparisons: list[Comparison] = Field(
        default_factory=list, description="each compared cohort and its control; a pair may differ only in `differs_in`"
    )
    policy: Policy = Field(Policy(), description="thresholds of the verdicts (margins, ceilings, alpha)")
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
