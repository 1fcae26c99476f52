"""The request-parameter space, read from the served vLLM rather than kept as a hand list.

vLLM's OpenAI server is a FastAPI app: `/openapi.json` carries the pydantic JSON schema of `CompletionRequest`
and `ChatCompletionRequest` of exactly the version that serves. `fetch_space(base_url)` reads it;
`build_space(python)` asks a build's interpreter for the same schemas when no server is up. Every field lands in
one of three groups:
- fields the generator knows the meaning of (`KNOWN`: it draws sensible values and an oracle checks them);
- transport and identity fields it never varies (`TRANSPORT`: model, prompt, stream, ids, KV transfer, ...);
- the rest: `generic()` fields, explored by their schema type (a flag the next release adds is sent too).
A field the build lacks is never generated; a value the build refuses (HTTP 400) is a fact about the build.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field
from typing import Any

COMPLETION_SCHEMA = "CompletionRequest"
CHAT_SCHEMA = "ChatCompletionRequest"

# Fields that carry the request itself, its transport, identity or routing: never varied by the fuzzer.
TRANSPORT = frozenset(
    {
        "model",
        "prompt",
        "messages",
        "stream",
        "stream_options",
        "user",
        "request_id",
        "session_id",
        "suffix",
        "echo",
        "prompt_embeds",
        "mm_payload",
        "return_mm_kwargs",
        "cache_salt",
        "kv_transfer_params",
        "ec_transfer_params",
        "routed_experts_prompt_start",
        "return_token_offsets",
        "return_tokens_as_token_ids",
        "return_token_ids",
        "add_special_tokens",
        "priority",
        "vllm_xargs",
        "documents",
        "chat_template",
        "chat_template_kwargs",
        "mm_processor_kwargs",
        "add_generation_prompt",
        "continue_final_message",
        "media_io_kwargs",
        "truncate_prompt_tokens",
        "truncation_side",
        "logprob_token_ids",
        "use_beam_search",
        "length_penalty",
        "parallel_tool_calls",
        "function_call",
        "functions",
        "metadata",
        "store",
        "service_tier",
        "audio",
        "modalities",
        "prediction",
        "web_search_options",
        "user_id",
        "max_completion_tokens",
        "top_logprobs",
        "logprobs",
        "max_tokens",
        "tools",
        "tool_choice",
        "n",
        "include_reasoning",
        "reasoning_effort",
        "watermarking",
        "cache_hit_threshold",
    }
)
# Fields the generator draws on purpose (eval/canary/fuzz/generate.py) and the oracles understand.
KNOWN = frozenset(
    {
        "temperature",
        "top_p",
        "top_k",
        "min_p",
        "seed",
        "frequency_penalty",
        "presence_penalty",
        "repetition_penalty",
        "logit_bias",
        "min_tokens",
        "stop",
        "stop_token_ids",
        "include_stop_str_in_output",
        "ignore_eos",
        "skip_special_tokens",
        "spaces_between_special_tokens",
        "allowed_token_ids",
        "bad_words",
        "prompt_logprobs",
        "response_format",
        "structured_outputs",
        "thinking_token_budget",
    }
)


@dataclass(frozen=True)
class FieldInfo:
    """One request field as the served schema declares it."""

    name: str
    kind: str  # bool | int | float | str | list | object | other
    minimum: float | None = None
    maximum: float | None = None
    default: Any = None


@dataclass
class ParamSpace:
    """The fields each endpoint accepts, as the served vLLM declares them."""

    completions: dict[str, FieldInfo] = field(default_factory=dict)
    chat: dict[str, FieldInfo] = field(default_factory=dict)
    source: str = "none"

    def accepts(self, endpoint: str, name: str) -> bool:
        fields = self.completions if endpoint == "completions" else self.chat
        return name in fields

    def generic(self, endpoint: str) -> list[FieldInfo]:
        """Fields of no known meaning that the generator can still vary by type (bools and bounded numbers)."""
        fields = self.completions if endpoint == "completions" else self.chat
        out = [f for f in fields.values() if f.name not in TRANSPORT and f.name not in KNOWN]
        return sorted((f for f in out if f.kind in ("bool", "int", "float")), key=lambda f: f.name)

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "completions": sorted(self.completions),
            "chat": sorted(self.chat),
            "known": sorted(k for k in KNOWN if k in self.completions or k in self.chat),
            "generic_completions": [f.name for f in self.generic("completions")],
            "generic_chat": [f.name for f in self.generic("chat")],
        }


def _kind(prop: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The first non-null type of a JSON-schema property, and the branch it came from."""
    branches = prop.get("anyOf") or prop.get("oneOf") or [prop]
    for b in branches:
        t = b.get("type")
        if t == "null":
            continue
        kind = {"boolean": "bool", "integer": "int", "number": "float", "string": "str", "array": "list"}
        if t in kind:
            return kind[t], b
        if t == "object" or "$ref" in b or "additionalProperties" in b:
            return "object", b
    return "other", prop


def fields_of(schema: dict[str, Any]) -> dict[str, FieldInfo]:
    out: dict[str, FieldInfo] = {}
    for name, prop in (schema.get("properties") or {}).items():
        kind, branch = _kind(prop)
        lo = branch.get("minimum", branch.get("exclusiveMinimum"))
        hi = branch.get("maximum", branch.get("exclusiveMaximum"))
        out[name] = FieldInfo(name, kind, lo, hi, prop.get("default"))
    return out


def space_from_openapi(doc: dict[str, Any], source: str = "openapi") -> ParamSpace:
    schemas = (doc.get("components") or {}).get("schemas") or doc.get("$defs") or {}
    comp, chat = schemas.get(COMPLETION_SCHEMA), schemas.get(CHAT_SCHEMA)
    if comp is None:
        raise ValueError(f"no {COMPLETION_SCHEMA} in the served OpenAPI schema")
    return ParamSpace(fields_of(comp), fields_of(chat or {}), source)


def fetch_space(base_url: str, timeout_s: float = 60) -> ParamSpace:
    """The space the server at `base_url` declares (`/openapi.json`)."""
    import httpx

    resp = httpx.get(base_url.rstrip("/") + "/openapi.json", timeout=timeout_s)
    resp.raise_for_status()
    return space_from_openapi(resp.json(), f"{base_url.rstrip('/')}/openapi.json")


_DUMP = """
import importlib, json
out = {}
for mod in ("vllm.entrypoints.openai.completion.protocol", "vllm.entrypoints.openai.chat_completion.protocol",
            "vllm.entrypoints.openai.protocol"):
    try:
        m = importlib.import_module(mod)
    except Exception:
        continue
    for name in ("CompletionRequest", "ChatCompletionRequest"):
        if name not in out and hasattr(m, name):
            out[name] = getattr(m, name).model_json_schema()
print(json.dumps({"components": {"schemas": out}}))
"""


def build_space(python: str, env: dict[str, str] | None = None, timeout_s: float = 300) -> ParamSpace:
    """The same schemas from a build's interpreter (no server needed): the protocol module of that version."""
    proc = subprocess.run([python, "-c", _DUMP], capture_output=True, text=True, timeout=timeout_s, env=env, check=True)
    return space_from_openapi(json.loads(proc.stdout.strip().splitlines()[-1]), f"{python} (protocol module)")


# ---------------------------------------------------------------- server configurations with a KV connector
#
# A case runs on a cohort's server; these are the server flags of the KV-connector cohorts (cohorts/
# kv-connector-cpu.yaml holds them, tests/unit/canary/test_kvfault.py checks that it matches). Configurations users
# run come first: vLLM's ExampleConnector (KV to local files, the one stock connector that runs on the CPU platform:
# the offloading connectors need CUDA streams) with the defaults, then without prefix caching (every repeated prompt
# loads from the files instead of the local cache). The test-only extras follow: the same connector with injected
# asynchronous loads and invalid blocks (eval/canary/fuzz/kvfault.py), under each `kv_load_failure_policy`.
KV_STORAGE_ROOT = "/tmp/specqual-kv"
KV_FAULT_MODULE = "eval.canary.fuzz.kvfault"
KV_FAULT_SETTINGS: dict[str, Any] = {"seed": 1, "async_rate": 0.5, "invalid_rate": 0.5, "async_delay_steps": 2}


@dataclass(frozen=True)
class KVServerConfig:
    """One server configuration with a KV connector; `user` False marks a test-only extra (fault injection)."""

    name: str
    user: bool
    connector: str = "ExampleConnector"
    prefix_caching: bool = True
    policy: str | None = None  # kv_load_failure_policy; None: vLLM's default (fail)
    faults: bool = False
    fault_settings: tuple[tuple[str, Any], ...] = ()  # over KV_FAULT_SETTINGS (kvfault.DEFAULTS names them)


KV_SERVER_CONFIGS: tuple[KVServerConfig, ...] = (
    KVServerConfig("kv", user=True),
    KVServerConfig("kvnc", user=True, prefix_caching=False),
    KVServerConfig("kvfault-rec", user=False, prefix_caching=False, policy="recompute", faults=True),
    KVServerConfig("kvfault-fail", user=False, prefix_caching=False, policy="fail", faults=True),
)


def kv_server_args(config: KVServerConfig, speculative: str, root: str = KV_STORAGE_ROOT) -> dict[str, Any]:
    """The server flags of `config` for a cohort with speculative setting `speculative` (its own storage
    directory: a speculative server saves its draft layers too, and another server's files would lack them)."""
    extra: dict[str, Any] = {"shared_storage_path": f"{root}/{config.name}-{speculative}"}
    kv: dict[str, Any] = {"kv_connector": config.connector, "kv_role": "kv_both"}
    if config.faults:
        kv["kv_connector"] = "Faulty" + config.connector
        kv["kv_connector_module_path"] = KV_FAULT_MODULE
        extra["fault_injection"] = {**KV_FAULT_SETTINGS, **dict(config.fault_settings)}
    if config.policy is not None:
        kv["kv_load_failure_policy"] = config.policy
    kv["kv_connector_extra_config"] = extra
    # ExampleConnector saves a new request's whole prompt in its first step and loads a prompt in one: a prompt
    # split over steps (chunked prefill) would save KV not computed yet, so its servers prefill a prompt at once.
    args: dict[str, Any] = {"kv_transfer_config": kv, "enable_chunked_prefill": False, "max_num_batched_tokens": 2048}
    if not config.prefix_caching:
        args["enable_prefix_caching"] = False
    return args


def kv_faults_of(args: dict[str, Any]) -> dict[str, Any] | None:
    """What the oracles need to know of a server's injected KV faults (None: no fault injector): the policy."""
    kv = args.get("kv_transfer_config")
    if not isinstance(kv, dict) or kv.get("kv_connector_module_path") != KV_FAULT_MODULE:
        return None
    extra = kv.get("kv_connector_extra_config") or {}
    return {"connector": kv.get("kv_connector"), "policy": kv.get("kv_load_failure_policy", "fail"),
            "settings": extra.get("fault_injection") or {}}  # fmt: skip


@dataclass(frozen=True)
class SchedServerConfig:
    """One scheduler configuration (cohorts/scheduler-cpu.yaml); `user` False marks a test-only extra. Every one
    runs with vLLM's dev-mode endpoints on (`VLLM_SERVER_DEV_MODE=1`: the fuzzer's engine control calls)."""

    name: str
    user: bool
    args: dict[str, Any] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)  # over SCHED_ENV


# Test-only failed-receive servers of the scheduler cohort (not in kv-connector-cpu.yaml)
KV_RECV_FAULTS: tuple[tuple[str, Any], ...] = (("async_rate", 1.0), ("failed_recv_rate", 0.5))
KV_RECV_CONFIGS: tuple[KVServerConfig, ...] = (
    KVServerConfig("kvrecv-rec", user=False, prefix_caching=False, policy="recompute", faults=True,
                   fault_settings=KV_RECV_FAULTS),
    KVServerConfig("kvrecv-fail", user=False, prefix_caching=False, policy="fail", faults=True,
                   fault_settings=KV_RECV_FAULTS),
)  # fmt: skip
# Test-only slow connector of the scheduler cohort: every load asynchronous and reported 0-30 steps later (a
# client abort, `pause_abort` or a reset lands while loads are in flight), half fail as a whole, half the lookups
# answer "not known yet" first, transfer stats and KV events reported, connector resets refused (kvfault.py)
KV_SLOW_FAULTS: tuple[tuple[str, Any], ...] = (
    ("async_rate", 1.0), ("failed_recv_rate", 0.5), ("async_delay_steps", 30), ("pending_lookup_rate", 0.5),
    ("report", True), ("refuse_reset", True),
)  # fmt: skip
# Test-only holding connector: every finished request's blocks held 0-30 steps while the connector "sends" their
# KV (a P/D prefill worker's connector), half the loads asynchronous, half with invalid blocks (kvfault.py)
KV_HOLD_FAULTS: tuple[tuple[str, Any], ...] = (("held_free_rate", 1.0), ("async_delay_steps", 30))
KV_HOLD_CONFIG = KVServerConfig("kvhold-rec", user=False, prefix_caching=False, policy="recompute", faults=True,
                                fault_settings=KV_HOLD_FAULTS)  # fmt: skip
KV_SLOW_CONFIG = KVServerConfig("kvslow-rec", user=False, prefix_caching=False, policy="recompute", faults=True,
                                fault_settings=KV_SLOW_FAULTS)  # fmt: skip

# KV blocks of the test-only pressure servers: one request up to max_model_len 2048 fits (32 blocks of 64 tokens,
# vLLM refuses to start below that), a busy case does not, so running requests are preempted mid-speculation.
SCHED_PRESSURE_BLOCKS = 40
SCHED_ENV = {"VLLM_SERVER_DEV_MODE": "1"}
SCHED_KV_ROOT = KV_STORAGE_ROOT + "/sched"
SCHED_SERVER_CONFIGS: tuple[SchedServerConfig, ...] = (
    SchedServerConfig("prio", user=True, args={"scheduling_policy": "priority"}),
    SchedServerConfig("limits", user=True, args={"max_num_seqs": 3, "long_prefill_token_threshold": 16}),
    # the same limits with the threshold floored at a fair share of the budget (--long-prefill-token-threshold-
    # adaptive: max_num_batched_tokens / queued and running requests)
    SchedServerConfig(
        "adapt",
        user=True,
        args={"max_num_seqs": 3, "long_prefill_token_threshold": 16, "long_prefill_token_threshold_adaptive": True},
    ),
    SchedServerConfig(
        "obs",  # what a server behind dashboards and a KV-aware router turns on
        user=True,
        args={
            "kv_cache_metrics": True,
            "enable_logging_iteration_details": True,
            "per_request_spec_decode_metrics": "detailed",
            "kv_events_config": {
                "enable_kv_cache_events": True,
                "publisher": "zmq",
                "endpoint": "tcp://127.0.0.1:5557",
            },
        },
    ),
    SchedServerConfig("nostats", user=True, args={"disable_log_stats": True}),
    # KV connector servers (KV_SERVER_CONFIGS, their own storage under sched/): the control calls reach the
    # connector (reset_external: /reset_prefix_cache?reset_external=true) and preempt requests that loaded KV
    SchedServerConfig("kvnc", user=True, args=kv_server_args(KV_SERVER_CONFIGS[1], "self4", SCHED_KV_ROOT)),
    # model FLOPs utilization metrics (--enable-mfu-metrics), and a server ready for LoRA adapters loaded at run
    # time (--enable-lora; the requests name none). vLLM refuses LoRA with speculation below a token budget of
    # max_num_seqs * (K + 1) (1280 at the default 256 sequences; cov-sched6-1208), so lora runs at 2048.
    SchedServerConfig("mfu", user=True, args={"enable_mfu_metrics": True}),
    SchedServerConfig("lora", user=True, args={"enable_lora": True, "max_num_batched_tokens": 2048}),
    # NaN diagnostics (VLLM_COMPUTE_NANS_IN_LOGITS=1: the runner counts NaNs in each request's logits every step)
    SchedServerConfig("nans", user=True, env={"VLLM_COMPUTE_NANS_IN_LOGITS": "1"}),
    SchedServerConfig(
        "press-prio",
        user=False,
        args={"scheduling_policy": "priority", "num_gpu_blocks_override": SCHED_PRESSURE_BLOCKS},
    ),
    SchedServerConfig("press", user=False, args={"num_gpu_blocks_override": SCHED_PRESSURE_BLOCKS}),
    SchedServerConfig("kvfault-rec", user=False, args=kv_server_args(KV_SERVER_CONFIGS[2], "self4", SCHED_KV_ROOT)),
    # failed receives: every load asynchronous, half of them fail as a whole (failed_recving), under both policies;
    # the fail one runs with --disable-log-stats too (a connector reset without stats)
    SchedServerConfig("kvrecv-rec", user=False, args=kv_server_args(KV_RECV_CONFIGS[0], "self4", SCHED_KV_ROOT)),
    SchedServerConfig(
        "kvrecv-fail",
        user=False,
        args={**kv_server_args(KV_RECV_CONFIGS[1], "self4", SCHED_KV_ROOT), "disable_log_stats": True},
    ),
    # the slow connector under KV-cache pressure: a request aborted while its load is in flight holds its blocks
    # until the load ends (has_pending_block_frees), and a running request that cannot grow waits for them
    # the holding connector under the same pressure: a running request that cannot grow waits for the held blocks
    # (has_pending_block_frees) instead of preempting
    SchedServerConfig(
        "kvhold-rec",
        user=False,
        args={
            **kv_server_args(KV_HOLD_CONFIG, "self4", SCHED_KV_ROOT),
            "num_gpu_blocks_override": SCHED_PRESSURE_BLOCKS,
        },
    ),
    SchedServerConfig(
        "kvslow-rec",
        user=False,
        args={
            **kv_server_args(KV_SLOW_CONFIG, "self4", SCHED_KV_ROOT),
            "num_gpu_blocks_override": SCHED_PRESSURE_BLOCKS,
        },
    ),
)
