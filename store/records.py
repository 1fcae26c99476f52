"""Typed records of the results directory, each with `schema_version` (the layout: store.layout).

Readers accept a record written by an older writer of the same schema version; `extra="allow"` keeps fields a
newer writer added, so a reader never drops what it does not know yet.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from store.layout import SCHEMA_VERSION
from store.order import SALT

Number = int | float  # a counter keeps the type it was exported with (JSON 12, not 12.0)


class MetricsSnapshot(BaseModel):
    """One line of `<cohort>/metrics.jsonl`: counters summed over the stack's vLLM processes (null: not exported)."""

    model_config = ConfigDict(extra="allow")

    schema_version: int = Field(SCHEMA_VERSION, description="Version of the results-directory schema.")
    t: float = Field(description="Unix time of the scrape.")
    phase: str = Field(description="Where in the workload the scrape was taken: before, after, periodic.")
    workload: str = Field(description="The workload running around the scrape (canary, swebench).")
    spec_decode_num_drafts: Number | None = Field(None, description="vllm:spec_decode_num_drafts_total.")
    spec_decode_num_draft_tokens: Number | None = Field(None, description="vllm:spec_decode_num_draft_tokens_total.")
    spec_decode_num_accepted_tokens: Number | None = Field(
        None, description="vllm:spec_decode_num_accepted_tokens_total."
    )
    spec_decode_accepted_per_pos: list[Number] | None = Field(
        None, description="vllm:spec_decode_num_accepted_tokens_per_pos_total, by draft position."
    )
    prefix_cache_queries: Number | None = Field(None, description="vllm:prefix_cache_queries_total.")
    prefix_cache_hits: Number | None = Field(None, description="vllm:prefix_cache_hits_total.")
    num_requests_running: Number | None = Field(None, description="vllm:num_requests_running (a gauge).")
    num_requests_waiting: Number | None = Field(None, description="vllm:num_requests_waiting (a gauge).")
    generation_tokens: Number | None = Field(None, description="vllm:generation_tokens_total.")
    prompt_tokens: Number | None = Field(None, description="vllm:prompt_tokens_total.")
    errors: list[str] | None = Field(None, description="Scrapes that failed (`url: error`): the sums are partial.")

    def record(self) -> dict[str, Any]:
        """The JSON line: `errors` only when a scrape failed."""
        return self.model_dump(mode="json", exclude_none=False, exclude={"errors"} if not self.errors else set())


class InstanceOrder(BaseModel):
    """`<run>/instances.json`: the seeded order the rollouts and the sequential test share (store.order)."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = Field(SCHEMA_VERSION, description="Version of the results-directory schema.")
    salt: str = Field(SALT, description="The salt of store.order.order_key the order was computed with.")
    instances: list[str] = Field(description="Instance ids in the order.")


class RunRecord(BaseModel):
    """`<run>/run.json`: the effective cohort file, its output hash, versions, host and times (results/README.md).

    Stages add their own status fields with `RunDir.mark`, so a reader keeps fields it does not know."""

    model_config = ConfigDict(extra="allow")

    schema_version: int = Field(SCHEMA_VERSION, description="Version of the results-directory schema.")
    run_id: str = Field(description="The run directory's name.")
    name: str = Field(description="The cohort file's `name`.")
    spec_hash: str | None = Field(
        description="sha256 over everything that can change what a model outputs (resume key); null: imported."
    )
    spec: dict[str, Any] = Field(description="The effective cohort file, secrets redacted.")
    sources: list[str] = Field(description="Cohort files and overrides in the order they were merged.")
    base_dir: str = Field(description="Directory relative paths of the cohort file resolve against.")
    cohorts: list[str] = Field(description="Cohort names in matrix order.")
    columns: dict[str, Any] = Field(description="Report column titles per factor.")
    versions: dict[str, str] = Field(description="Python and library versions of the run.")
    host: dict[str, str] = Field(description="Host name, platform and user.")
    argv: list[str] = Field(description="The command line, secrets redacted.")
    started_at: str = Field(description="ISO time the run started.")
    resumed_at: list[str] = Field(default_factory=list, description="ISO times the run was resumed.")
    ended_at: str | None = Field(None, description="ISO time the run ended; null while it runs.")


class CohortRecord(BaseModel):
    """`<run>/<cohort>/cohort.json`: what defines a cohort's stack and how it is reported."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = Field(SCHEMA_VERSION, description="Version of the results-directory schema.")
    name: str = Field(description="Cohort name.")
    label: str = Field(description="Row label in reports.")
    factors: dict[str, str] = Field(description="Factor name -> value name.")
    factor_labels: dict[str, str] = Field(description="Factor name -> value label.")
    columns: dict[str, Any] = Field(description="Report column titles of the cohort's factors.")
    control: str | None = Field(description="The cohort's control, if it is compared.")
    policy: dict[str, Any] | None = Field(description="The verdict thresholds (null: an imported cohort).")
    speculative_config: dict[str, Any] | None = Field(description="--speculative-config; null: speculation off.")
    build: dict[str, Any] | None = Field(description="The vLLM build (source and patches); null: imported.")
    env: dict[str, str] = Field(default_factory=dict, description="Server environment, secrets redacted.")
    topology: dict[str, Any] | None = Field(description="Single server or prefill/decode workers; null: imported.")
    model: str | None = Field(None, description="Name of the cohort's model in the cohort file (older runs: null).")
    served_name: str | None = Field(None, description="Model name the server answers to (older runs: null).")
    workloads: list[str] | None = Field(None, description="Workloads the cohort runs (older runs: null).")
    tool_call_parser: str | None = Field(description="--tool-call-parser of the server.")
    gpus: int | None = Field(description="GPUs the stack uses (null: an imported cohort).")
    commands: list[str] = Field(description="The launch command lines, secrets redacted.")
    imported_from: str | None = Field(None, description="The format of an imported cohort (specqual import).")

    def record(self) -> dict[str, Any]:
        """The JSON object; `imported_from` only on an imported cohort."""
        return self.model_dump(mode="json", exclude={"imported_from"} if self.imported_from is None else set())
