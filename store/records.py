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
