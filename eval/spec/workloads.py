"""The workload blocks of a cohort file (`workloads:`): the canary probe and the SWE-bench rollouts."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, field_validator

from eval.spec.base import Name, Strict

CanaryMode = Literal["fuzz", "prefix_hit", "prefix_hit_concurrent", "fresh", "tool_aba", "sampler_mix", "chunked_tail"]
DEFAULT_CANARY_MODES: tuple[CanaryMode, ...] = ("prefix_hit", "prefix_hit_concurrent", "fresh")

# The agent's vocabulary, checked here when the file loads (eval.agent implements it; a unit test keeps the two
# in step): tool names, feedback kinds, and the placeholders a feedback message may use.
AGENT_TOOLS = ("bash", "submit")
FEEDBACK_KINDS = ("no_tool_call", "malformed_arguments", "missing_command", "unknown_tool")
FEEDBACK_PLACEHOLDERS = ("name", "detail", "tools")


class CanaryWorkload(Strict):
    enabled: bool = True
    modes: list[CanaryMode] = Field(default_factory=lambda: list(DEFAULT_CANARY_MODES))
    probes_per_mode: int = Field(8, ge=1)
    block_size: int = Field(64, ge=1, description="KV block size of the server (prefix hits are block-aligned)")
    warm_blocks: int = Field(2, ge=1, description="prompt blocks that get cached before the probe")
    extra_warm_tokens: int = Field(32, ge=0)
    max_tokens: int = Field(32, ge=1)
    concurrent_max_tokens: int = Field(400, ge=1)
    seed: int = 0
    tool_burst: int = Field(6, ge=1, description="agent-like chats sent during tool_aba's B request")
    reference: Name | None = Field(
        None, description="cohort whose outputs cohorts without a control are compared with (default: first such)"
    )
    # The judgement (docs/trust/canary.md, "How it judges"): one setting for every build and dtype, calibrated on
    # clean-vs-clean runs. 0 logprobs turns the judgement off (token equality only).
    logprobs: int = Field(5, ge=0, le=20, description="top-k logprobs asked for on every completion (judgement)")
    near_tie_nats: float = Field(
        0.25, ge=0, description="a first divergence whose margin on both sides is at most this is a benign flip"
    )
    logprob_tolerance: float = Field(
        0.5, gt=0, description="returned logprobs of identical tokens may differ by this much from the reference's"
    )
    acceptance_floor: float = Field(
        0.3, ge=0, le=1, description="below this draft acceptance the verdict names the bug classes it could not see"
    )
    # The generated differential fuzzer (mode `fuzz`, eval/canary/fuzz): seeded cases until the budget ends.
    fuzz_budget_s: float = Field(
        240, gt=0, description="seconds of fuzz cases per cohort (the probe stays within 5 minutes per cohort)"
    )
    fuzz_cases: int = Field(
        400, ge=1, description="at most this many fuzz cases per cohort (case i is the same everywhere)"
    )
    fuzz_max_concurrency: int = Field(16, ge=1, le=64, description="largest number of requests in one fuzz case")
    fuzz_features: list[str] | None = Field(
        None, description="generate only these features (eval/canary/fuzz/generate.py FEATURES); default: all"
    )
    fuzz_exclude: list[str] = Field(
        default_factory=list, description="never generate these features (e.g. one whose crash is already known)"
    )


class AgentSpec(Strict):
    kind: str = Field("toolcall", description="toolcall | gold | empty (registry name)")
    max_turns: int = Field(50, ge=1)
    max_tokens_per_reply: int = Field(4096, ge=1)
    command_timeout_s: float = Field(120, gt=0)
    observation_max_chars: int = Field(10000, ge=100)
    tools: list[str] = Field(default_factory=lambda: ["bash", "submit"])
    tool_choice: Literal["auto", "required"] = "auto"
    system_prompt: str | None = None
    feedback: dict[str, str] = Field(default_factory=dict, description="message per failure kind")
    strict_tools: bool = Field(False, description='send "strict": true on each tool (guided arguments)')
    final_answer_pattern: str | None = Field(None, description="regex: a reply without tool call that ends it")
    max_consecutive_no_tool_calls: int = Field(3, ge=1, description="then exit_reason no_tool_call")
    return_token_ids: bool = Field(True, description="ask vLLM for prompt/output token ids")

    @field_validator("tools")
    @classmethod
    def _known_tools(cls, v: list[str]) -> list[str]:
        unknown = [n for n in v if n not in AGENT_TOOLS]
        if unknown:
            raise ValueError(f"unknown tools {unknown} (known: {', '.join(AGENT_TOOLS)})")
        if len(set(v)) != len(v):
            raise ValueError(f"a tool is named twice: {v}")
        return v

    @field_validator("feedback")
    @classmethod
    def _known_feedback(cls, v: dict[str, str]) -> dict[str, str]:
        unknown = sorted(set(v) - set(FEEDBACK_KINDS))
        if unknown:
            raise ValueError(f"unknown feedback kinds {unknown} (known: {', '.join(FEEDBACK_KINDS)})")
        for kind, message in v.items():
            try:
                message.format(**{p: "" for p in FEEDBACK_PLACEHOLDERS})
            except (KeyError, IndexError, ValueError) as e:
                known = ", ".join("{" + p + "}" for p in FEEDBACK_PLACEHOLDERS)
                raise ValueError(
                    f"{kind}: the message does not format ({type(e).__name__}: {e}); placeholders: {known}, "
                    "and {{ }} for a literal brace"
                ) from None
        return v

    @field_validator("final_answer_pattern")
    @classmethod
    def _compiles(cls, v: str | None) -> str | None:
        if v is not None:
            try:
                re.compile(v, re.DOTALL)
            except re.error as e:
                raise ValueError(f"not a regular expression: {e}") from None
        return v

    request_timeout_s: float = Field(900, gt=0)
    request_retries: int = Field(3, ge=0, description="retries of a request on connection errors and 5xx")


class SandboxSpec(Strict):
    kind: Literal["docker", "bwrap"] = "docker"
    cpus: float = Field(1.0, gt=0)
    memory_gb: float = Field(8.0, gt=0)


class GraderSpec(Strict):
    kind: Literal["docker", "local", "modal"] = "docker"
    timeout_s: float = Field(1800, gt=0)
    workers: int = Field(4, ge=1)


class SWEBenchWorkload(Strict):
    enabled: bool = True
    dataset: str = "SWE-bench/SWE-bench_Verified"
    path: str | None = Field(None, description="local parquet/JSONL copy, or a local task set directory")
    split: str = "test"
    instances: list[str] | None = None
    filter: str | None = Field(None, description="regular expression on instance_id")
    exclude: str | None = Field(None, description="exclusion list file (instance_id and reason per line)")
    limit: int | None = Field(None, ge=1)
    repeats: int = Field(3, ge=1)
    agent: AgentSpec = AgentSpec()
    sandbox: SandboxSpec = SandboxSpec()
    grader: GraderSpec = GraderSpec()
    grade_during_run: bool = Field(
        True,
        description="grade each unit as it finishes; false leaves the run ungraded for `specqual grade` (a GPU "
        "node without the task set's sandbox)",
    )
    concurrency: int = Field(16, ge=1)
    max_infra_retries: int = Field(2, ge=0)
    expected_instances: int | None = Field(None, ge=1, description="instance count for plans when offline")

    @field_validator("filter")
    @classmethod
    def _regex(cls, v: str | None) -> str | None:
        if v is not None:
            try:
                re.compile(v)
            except re.error as e:
                raise ValueError(f"not a regular expression: {e}") from None
        return v


class SoakWorkload(Strict):
    """The uptime soak (`specqual soak`, eval/uptime): canary phases before, during and after a bounded, seeded
    load on one server, and an acceptance monitor over /metrics. Not a pipeline stage of its own (`enabled()`
    leaves it out): `specqual soak` runs it, and the pipeline may call it around the rollouts."""

    cohorts: list[Name] = Field(min_length=1, description="cohorts to soak, each on its own fresh server")
    reference: Name | None = Field(
        None, description="cohort (speculation off) whose fresh-phase outputs every phase is compared with"
    )
    requests: int | None = Field(120, ge=1, description="soak size in requests (the soak ends at either bound)")
    duration_s: float | None = Field(None, gt=0, description="soak size in seconds (the soak ends at either bound)")
    concurrency: int = Field(4, ge=1, description="soak requests in flight at once")
    seed: int = Field(0, description="seed of the soak plan (sessions, lengths, aborts) and of the probes")
    sessions: int = Field(12, ge=1, description="agent sessions; their turns and repeats share prompt prefixes")
    long_fraction: float = Field(0.3, ge=0, le=1, description="share of requests with the long token budget")
    short_max_tokens: int = Field(48, ge=1, description="token budget of a short soak request")
    long_max_tokens: int = Field(192, ge=1, description="token budget of a long soak request (no EOS stop)")
    abort_fraction: float = Field(0.1, ge=0, le=1, description="share of streaming requests aborted mid-reply")
    abort_after_chunks: int = Field(4, ge=1, description="an aborted request is dropped after this many chunks")
    probes: int = Field(4, ge=1, description="canary probes per phase (prefix-hit chats, compared token by token)")
    probe_max_tokens: int = Field(32, ge=1, description="tokens each probe generates (ignore_eos: fixed length)")
    during_at: list[float] = Field(
        default_factory=lambda: [0.5], description="fractions of the soak's requests after which a during phase runs"
    )
    logprobs: int = Field(5, ge=0, le=20, description="top-k logprobs per probe token, for the canary's judgement")
    near_tie_nats: float = Field(0.25, ge=0, description="a divergence within this margin on both sides is benign")
    logprob_tolerance: float = Field(0.5, gt=0, description="allowed logprob difference of identical tokens")
    window_s: float = Field(5.0, gt=0, description="width of an acceptance window (seconds of /metrics growth)")
    scrape_every_s: float = Field(1.0, gt=0, description="seconds between /metrics snapshots during the soak")
    min_window_draft_tokens: int = Field(
        50, ge=1, description="a window with fewer draft tokens is pooled with the next before it is tested"
    )
    baseline_windows: int = Field(3, ge=1, description="pooled windows that set the baseline acceptance")
    max_relative_drop: float = Field(
        0.5, gt=0, lt=1, description="the detector's null: acceptance stays above (1 - this) x baseline"
    )
    alpha: float = Field(0.001, gt=0, lt=1, description="the e-detector alarms when its e-value reaches 1/alpha")


WorkloadName = Literal["canary", "swebench"]


class SampledSetting(Strict):
    """One point of the sampled mode's grid (temperature > 0: greedy requests are the canary's)."""

    temperature: float = Field(gt=0, description="sampling temperature of the draws at this setting")
    top_p: float = Field(1.0, gt=0, le=1, description="nucleus mass (1: off)")
    top_k: int | None = Field(None, ge=1, description="keep the k most likely tokens (None: off)")


class SampledWorkload(Strict):
    """The canary's sampled mode (`specqual sampled`, eval/canary/sampled; issue 28): seeded draws at temperature
    > 0, each sampled token tested against the reference stack's exact distribution. Not a pipeline stage."""

    reference: Name = Field(description="cohort (speculation off) that re-scores every draw with prompt logprobs")
    cohorts: list[Name] | None = Field(None, description="cohorts to probe (default: every cohort of the matrix)")
    settings: list[SampledSetting] = Field(
        default_factory=lambda: [
            SampledSetting(temperature=1.0, top_p=1.0),
            SampledSetting(temperature=0.7, top_p=0.95, top_k=50),
        ],
        min_length=1,
        description="the grid; draw i uses setting i mod len(settings)",
    )
    seed: int = Field(0, description="seed of prompts, settings and request seeds (vary it between runs)")
    max_tokens: int = Field(16, ge=1, description="tokens per draw (many short draws)")
    prompt_tokens: tuple[int, int] = Field((8, 24), description="prompt length range of fresh draws (token ids)")
    batch: int = Field(16, ge=1, description="draws sent concurrently; the test is read after each batch")
    unseeded_fraction: float = Field(0.25, ge=0, le=1, description="share of draws sent without a seed")
    greedy_fraction: float = Field(
        0.0, ge=0, le=1, description="share of greedy draws whose every token is re-scored (argmax up to a near tie)"
    )
    prefix_hit_fraction: float = Field(
        0.0,
        ge=0,
        le=1,
        description="share of draws whose prompt is a warmed cached prefix + one token (the padded-tail trigger)",
    )
    warm_tokens: int = Field(160, ge=2, description="length of the warmed prompt of prefix-hit draws")
    hit_tokens: int = Field(128, ge=1, description="cached prefix length of a prefix-hit draw (block-aligned)")
    alpha: float = Field(0.05, gt=0, lt=1, description="false-FAIL bound at every sample size (Ville)")
    alpha_eq: float = Field(0.05, gt=0, lt=1, description="false-PASS bound of the equivalence side")
    tolerance: float = Field(0.02, gt=0, lt=1, description="PASS excludes a PIT total-variation shift above this")
    slack: dict[str, float] = Field(
        default_factory=lambda: {"float32": 0.0, "bfloat16": 0.01},
        description="per served dtype: TV between reference and server that rounding explains (FAIL needs more)",
    )
    support_slack_nats: dict[str, float] = Field(
        default_factory=lambda: {"float32": 1e-4, "bfloat16": 0.1},
        description="per dtype: a token outside top-k/top-p by at most this many nats is a rounding tie, not a FAIL",
    )
    near_tie_nats: float = Field(0.25, ge=0, description="greedy draws: a non-argmax token this close is a near tie")
    budget_s: float = Field(300, gt=0, description="seconds of probing per cohort (stops earlier once decided)")
    max_draws: int = Field(4000, ge=1, description="draws per cohort at most")


class Workloads(Strict):
    canary: CanaryWorkload | None = None
    swebench: SWEBenchWorkload | None = None
    soak: SoakWorkload | None = Field(None, description="the uptime soak (`specqual soak`); not a pipeline stage")
    sampled: SampledWorkload | None = Field(
        None, description="the canary's sampled mode (`specqual sampled`); not a pipeline stage"
    )

    def enabled(self) -> list[str]:
        """Names of the declared, enabled workloads, in stage order."""
        return [n for n in ("canary", "swebench") if (w := getattr(self, n)) is not None and w.enabled]
