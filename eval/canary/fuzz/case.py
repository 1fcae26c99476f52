"""The fuzzer's data: a Case is a server configuration plus timed requests; a Finding is one oracle's word.

Every model is pydantic with `extra="forbid"`, so a case serializes to JSON (the probe records and the
reproducer carry it) and round-trips. The same seed and index give the same Case (eval/canary/fuzz/generate.py).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

FindingVerdict = Literal["pass", "fail", "inconclusive", "fact"]


# The reasoning markers of the think-tag parsers (deepseek_r1, qwen3): the generator writes them into prompts when
# the server has a reasoning parser, and the structured oracle judges only what follows the end marker.
REASONING_START, REASONING_END = "<think>", "</think>"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ServerConfig(_Model):
    """A server configuration a case asks for: the cohort's own (`default`), or a user-facing variant."""

    name: str = Field("default", description="'default' = the cohort's stack as its file configures it")
    args: dict[str, Any] = Field(
        default_factory=dict, description="vLLM server flags on top of the cohort's (snake_case -> value)"
    )


class TimedRequest(_Model):
    """One request of a case: when it is sent, where, with what, and whether the client aborts it."""

    role: str = Field(description="name of the request inside its case (r0, r1, ...), stable under shrinking")
    endpoint: Literal["completions", "chat"] = Field("completions", description="/v1/completions or chat")
    prompt_token_ids: list[int] = Field(default_factory=list, description="completions: the prompt as token ids")
    messages: list[dict[str, Any]] | None = Field(None, description="chat: the messages")
    params: dict[str, Any] = Field(
        default_factory=dict, description="request body fields on top of model/prompt (sampling parameters etc.)"
    )
    start_ms: int = Field(
        0, ge=0, description="send this long after the case starts (after `after`'s first token, when set)"
    )
    after: str | None = Field(None, description="send once this request (role) has streamed its first token")
    stream: bool = Field(True, description="stream the reply (token chunks show per-step output)")
    abort_after_tokens: int | None = Field(None, ge=1, description="client closes the stream after this many tokens")
    abort_after_ms: int | None = Field(
        None, ge=1, description="client closes the stream this long after sending it, whatever it got (a timeout)"
    )
    features: list[str] = Field(default_factory=list, description="feature tags, for coverage and shrinking")
    banned_sequences: list[list[int]] = Field(
        default_factory=list, description="token ids of each bad word as vLLM bans them (not sent; for the oracle)"
    )
    reasoning_end_ids: list[int] = Field(
        default_factory=list,
        description="token ids of the reasoning end (`</think>`) where the request has a thinking budget (not sent; "
        "for the oracle)",
    )
    until_others_done: bool = Field(
        False,
        description="a long request the others join: the client closes its stream once every other request is done",
    )
    derive: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description="output-guided parameters still to fill from a pilot run of this request on one server "
        "(eval/canary/fuzz/derive.py): parameter -> what was drawn (relative position, lengths); empty once resolved",
    )

    @property
    def sampled(self) -> bool:
        """Temperature > 0: not comparable token by token with another server; self-checks only."""
        return float(self.params.get("temperature") or 0.0) > 0.0


ControlAction = Literal["pause", "pause_wait", "pause_abort", "reset_prefix_cache", "reset_running", "reset_external"]


class EngineControl(_Model):
    """An engine control call made during a case, as RL frameworks make between weight updates (vLLM's dev-mode
    endpoints, `VLLM_SERVER_DEV_MODE=1`): none of them may change a request's output. A server without them
    answers 404 and runs the case as if the call had not been made."""

    action: ControlAction = Field(
        description="pause: /pause?mode=keep (requests frozen in place), /resume after hold_ms; pause_wait: "
        "mode=wait (new requests held until the running ones finish); pause_abort: mode=abort (vLLM's default: "
        "running requests end with finish_reason abort and are compared on what they got); reset_prefix_cache: "
        "/reset_prefix_cache; reset_running: the same with reset_running_requests=true (running requests preempted); "
        "reset_external: with reset_external=true (a KV connector's cache too)"
    )
    after: str | None = Field(None, description="made once this request (role) has streamed its first token")
    start_ms: int = Field(0, ge=0, description="delay (ms) after `after`'s first token, or after the case's start")
    hold_ms: int = Field(0, ge=0, description="pause: how long the engine stays paused (ms)")


class Case(_Model):
    """A generated test case: server configuration + timed requests. `seed` and `index` regenerate it."""

    schema_version: int = Field(1, description="version of the case's schema (fuzz-cases/*.json, repro/case.json)")
    seed: int = Field(description="generator seed")
    index: int = Field(ge=0, description="case number under the seed")
    server: ServerConfig = Field(default_factory=ServerConfig, description="server configuration")
    requests: list[TimedRequest] = Field(description="the requests, in role order")
    shrunk_from: int | None = Field(None, description="request count before shrinking, if shrunk")
    controls: list[EngineControl] = Field(
        default_factory=list, description="engine control calls made while the requests run (feature engine_control)"
    )

    @property
    def case_id(self) -> str:
        return f"fuzz-{self.index:03d}"

    def request(self, role: str) -> TimedRequest:
        return next(r for r in self.requests if r.role == role)

    @property
    def concurrency(self) -> int:
        """The most requests that can be in flight at once (requests that start together)."""
        return len(self.requests)


class Finding(_Model):
    """One oracle's judgement of one request of a case."""

    oracle: str = Field(description="registry name of the oracle")
    case_id: str | None = Field(None, description="the case (fuzz-<index>) the judged request belongs to")
    role: str = Field(description="the request judged")
    verdict: FindingVerdict = Field(description="pass | fail (corruption) | inconclusive | fact (about the build)")
    reason: str = Field("", description="why, in words")
    position: int | None = Field(None, description="output position of the evidence, if any")
    detail: dict[str, Any] = Field(default_factory=dict, description="oracle-specific evidence")

    @property
    def failed(self) -> bool:
        return self.verdict == "fail"
