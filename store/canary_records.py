"""Typed records of the canary, the sampled-mode probe and the uptime soak (their writers live in eval/canary and
eval/uptime): `<cohort>/probes/<probe_id>.json` (ProbeResult), `<cohort>/canary.json` (CanarySummary),
`<cohort>/sampled/seed<k>/sampled.json` (SampledSummary), `<cohort>/uptime/soak.json` (SoakCounts) and
`<cohort>/uptime.json` (UptimeSummary).

Fields an older writer did not write have defaults (the committed examples keep slimmed probes without their
prompt ids), so old directories still read.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from store.layout import SCHEMA_VERSION


class ProbeResult(BaseModel):
    """`<cohort>/probes/<probe_id>.json`: one request of one probe, what came back, how it compares."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = Field(SCHEMA_VERSION, description="Version of the results-directory schema.")
    probe_id: str = Field(description="`<mode>-<index:03d>-<role>`.")
    cohort: str = Field(description="The cohort probed.")
    mode: str = Field(description="The probe mode (fresh, prefix_hit_concurrent, tool_aba, sampler_mix ...).")
    index: int | None = Field(None, description="The probe's index within its mode (older slimmed files lack it).")
    role: str = Field(description="The request's role in the probe (target, concurrent, tool_a1 ...).")
    prompt_token_ids: list[int] | None = Field(None, description="The prompt's token ids.")
    prompt_tokens: int | None = Field(None, description="usage.prompt_tokens.")
    cached_tokens: int | None = Field(None, description="usage.prompt_tokens_details.cached_tokens.")
    output_token_ids: list[int] | None = Field(None, description="The generated token ids.")
    output_text: str | None = Field(None, description="The generated text.")
    finish_reason: str | None = Field(None, description="The choice's finish_reason.")
    latency_s: float | None = Field(None, description="Seconds from request to response.")
    overlapped: bool | None = Field(None, description="Concurrent modes: both requests were in flight together.")
    server: str | None = Field(None, description="Base URL that answered.")
    infra_error: str | None = Field(None, description="Why the request failed (never counted as corruption).")
    reference_cohort: str | None = Field(None, description="The cohort it was compared with.")
    compared_tokens: int | None = Field(None, description="Tokens compared with the reference.")
    diverged: bool | None = Field(
        None, description="Whether the output differs from the reference (null: not compared)."
    )
    first_divergence: int | None = Field(None, description="The first differing output position.")
    divergent_tokens: int | None = Field(None, description="Output positions that differ.")
    params: dict[str, Any] | None = Field(None, description="Per-request sampling parameters beyond greedy.")
    output_token_logprobs: list[float | None] | None = Field(None, description="Logprob of each output token.")
    output_top_logprobs: list[dict[str, float]] | None = Field(
        None, description="Per position: token id (as a string) -> logprob."
    )
    judgement: dict[str, Any] | None = Field(None, description="eval.canary.judge's verdict and why.")
    extra: dict[str, Any] = Field(default_factory=dict, description="Mode-specific facts (phase, tail_tokens ...).")


class ModeCounts(BaseModel):
    """The canary's counts for one probe mode."""

    model_config = ConfigDict(extra="forbid")

    probes: int = Field(0, description="Requests of the mode.")
    compared: int = Field(0, description="Requests compared with a reference.")
    diverged: int = Field(0, description="Compared requests whose tokens differ.")
    infra_errors: int = Field(0, description="Requests lost to infrastructure.")
    corrupted: int = Field(0, description="Divergences judged corruption (older files lack it).")
    near_ties: int = Field(0, description="Divergences judged benign near-tie flips (older files lack it).")


class CanarySummary(BaseModel):
    """`<cohort>/canary.json`: what the canary found on one cohort."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = Field(SCHEMA_VERSION, description="Version of the results-directory schema.")
    cohort: str = Field(description="The cohort.")
    reference_cohorts: list[str] = Field(description="Cohorts its probes were compared with.")
    is_reference: bool = Field(description="Whether it is the canary's reference.")
    probes: int = Field(description="Requests sent.")
    compared: int = Field(description="Requests compared.")
    diverged: int = Field(description="Compared requests whose tokens differ.")
    infra_errors: int = Field(description="Requests lost to infrastructure.")
    cached_hits: int = Field(description="Requests served with a prefix-cache hit.")
    overlapped: int = Field(description="Concurrent requests that were in flight together.")
    by_mode: dict[str, ModeCounts] = Field(description="Probe mode -> its counts.")
    first_divergence_histogram: dict[str, int] = Field(description="First divergent position -> requests.")
    verdict: str = Field(description="clean, corrupted, inconclusive, reference ...")
    reason: str = Field(description="Why, in words.")
    corrupted: int = Field(0, description="Divergences judged corruption (the verdict counts these).")
    near_ties: int = Field(0, description="Divergences judged benign near-tie flips.")
    acceptance: float | None = Field(None, description="Accepted / drafted tokens during the probes.")
    blind_to: list[str] = Field(default_factory=list, description="Bug classes this run could not see.")
    wall_s: float | None = Field(None, description="Seconds of probing.")
    server_error: str | None = Field(None, description="Root cause found in the server logs when requests failed.")
    extra: dict[str, Any] = Field(default_factory=dict, description="Further facts of the run.")


class SampledSummary(BaseModel):
    """`<cohort>/sampled/seed<k>/sampled.json`: the sampled-mode probe's sequential test on one seed."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = Field(SCHEMA_VERSION, description="Version of the results-directory schema.")
    cohort: str = Field(description="The cohort.")
    seed: int = Field(description="The seed of the draws.")
    dtype: str = Field(description="The model's dtype on the stack.")
    verdict: str = Field(description="FAIL, PASS, INCONCLUSIVE (budget ended undecided) or INFRA (nothing judged).")
    wall_s: float = Field(description="Seconds it took.")
    draws: int = Field(description="Requests drawn.")
    errors: int = Field(description="Draws lost to errors.")
    greedy_tokens: int = Field(0, description="Tokens of the greedy check.")
    greedy_violations: int = Field(0, description="Greedy tokens that broke the reference's argmax.")
    inexact_tokens: int = Field(0, description="Tokens whose reference logprobs were not exact.")
    boundary_ties: int = Field(0, description="Tokens at a tie of the reference distribution.")
    decode_tv: dict[str, Any] | None = Field(None, description="Decode-side total-variation statistics.")
    decode_logprob_gap: dict[str, Any] | None = Field(None, description="Decode-side logprob gap statistics.")
    test: dict[str, Any] = Field(description="The sequential test's state (decision, tokens, e-value, bounds).")
    config: dict[str, Any] = Field(description="The workload's settings (workloads.sampled).")
    path: list[dict[str, Any]] = Field(description="The test's state over time.")


class SoakCounts(BaseModel):
    """`<cohort>/uptime/soak.json`: what the soak sent and what came back."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = Field(SCHEMA_VERSION, description="Version of the results-directory schema.")
    planned: int = Field(0, description="Requests planned.")
    sent: int = Field(0, description="Requests sent.")
    completed: int = Field(0, description="Requests answered.")
    aborted: int = Field(0, description="Requests aborted by the client.")
    errors: int = Field(0, description="Requests that failed.")
    prompt_tokens: int = Field(0, description="Prompt tokens sent.")
    cached_tokens: int = Field(0, description="Prompt tokens served from the prefix cache.")
    output_tokens: int = Field(0, description="Tokens generated.")
    wall_s: float = Field(0.0, description="Seconds of the soak.")
    error_samples: list[str] = Field(default_factory=list, description="A few of the errors, as text.")


class UptimeSummary(BaseModel):
    """`<cohort>/uptime.json`: the soak's phases compared, the acceptance monitor, and the verdict."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = Field(SCHEMA_VERSION, description="Version of the results-directory schema.")
    cohort: str = Field(description="The cohort.")
    reference: str | None = Field(description="The soak's reference cohort.")
    is_reference: bool = Field(description="Whether this cohort is the reference.")
    soak: SoakCounts | None = Field(description="The soak's counts (null: phases only, or around rollouts).")
    phases: list[dict[str, Any]] = Field(description="Per phase: probes, answers, comparisons (eval.uptime.phases).")
    monitor: dict[str, Any] = Field(description="The acceptance monitor's windows and detector (eval.uptime.monitor).")
    verdict: str = Field(description="The soak's verdict.")
    reasons: list[str] = Field(default_factory=list, description="Why, in words.")
    first_divergence: dict[str, Any] | None = Field(None, description="The earliest phase with corrupted probes.")
