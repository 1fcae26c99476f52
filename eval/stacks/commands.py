"""Server command lines for a cohort: one process per server, prefill/decode worker and router.

Commands are built with placeholders (`{python}`, `{host}`, `{port.ROLE.N}`, `{url.ROLE.N}`) so that
`specqual plan` can print them before any port exists; `render` fills them in at launch.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eval.secrets import redact_argv, redact_env
from eval.spec.matrix import Cohort
from eval.spec.models import CohortFile, ModelSpec, PDTopology

SERVER_MODULE = "vllm.entrypoints.openai.api_server"
_PLACEHOLDER = re.compile(r"\{(python|host|(?:port|url)\.[a-z]+\.\d+)\}")


@dataclass(frozen=True)
class ProcessCommand:
    role: str  # server | prefill | decode | router
    index: int
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    gpus: int = 0

    @property
    def key(self) -> str:
        return f"{self.role}.{self.index}"

    def shell(self, mapping: dict[str, str] | None = None) -> str:
        """The command line for people and records: secrets redacted (see eval.secrets)."""
        argv = redact_argv(render(self.argv, mapping) if mapping else self.argv)
        env = " ".join(f"{k}={shlex.quote(v)}" for k, v in sorted(redact_env(self.env).items()))
        return (env + " " if env else "") + shlex.join(argv)


def to_flags(args: dict[str, Any]) -> list[str]:
    """`{"enable_prefix_caching": True, "speculative_config": {...}}` -> `--enable-prefix-caching ...`.

    Dict values are JSON (never `str()`), False becomes `--no-FLAG`, None is left out.
    """
    out: list[str] = []
    for key, value in args.items():
        flag = "--" + key.replace("_", "-")
        if value is None:
            continue
        if value is True:
            out.append(flag)
        elif value is False:
            out.append("--no-" + key.replace("_", "-"))
        elif isinstance(value, dict):
            out += [flag, json.dumps(value, sort_keys=True, separators=(",", ":"))]
        elif isinstance(value, list):
            out += [flag, *(str(v) for v in value)]
        else:
            out += [flag, str(value)]
    return out


# `speculative.<name>.model: "@target"` (method draft_model): the draft model is the cohort's own model, wherever
# it was generated or resolved (self-drafting gets drafts accepted on a random model: docs/trust/bugzoo.md).
# `"@target/<dir>"`: a directory inside the model's, such as the EAGLE heads a generator writes beside its model
# (tiny-llama's `draft_heads`).
SELF_DRAFT = "@target"


def draft_model_path(value: Any, model_path: str) -> Any:
    """The speculative config's `model` with `@target` / `@target/<dir>` made a path; other values unchanged."""
    if value == SELF_DRAFT:
        return model_path
    if isinstance(value, str) and value.startswith(SELF_DRAFT + "/"):
        what = f"speculative model {value!r}"
        hint = (
            "a generated tiny-llama writes its EAGLE heads there with options: "
            "{draft_heads: [eagle, eagle3, hetero-vocab]}"
        )
        return _inside_model(value, model_path, what, "e.g. @target/eagle3", hint)
    return value


def lora_modules_paths(value: Any, model_path: str) -> Any:
    """`--lora-modules` entries `<name>=@target/<dir>` with the directory made a path inside the served model's
    (LoRA adapters a generator writes beside its model: tiny-llama's `lora_adapters`); other entries unchanged."""
    if not isinstance(value, list):
        return value
    out: list[Any] = []
    for entry in value:
        if isinstance(entry, str) and "=" in entry:
            name, path = entry.split("=", 1)
            if path.startswith(SELF_DRAFT + "/"):
                hint = "a generated tiny-llama writes adapters there with options: {lora_adapters: [<name>, ...]}"
                entry = f"{name}={_inside_model(path, model_path, f'LoRA module {entry!r}', '', hint)}"
        out.append(entry)
    return out


def _inside_model(value: str, model_path: str, what: str, example: str, hint: str) -> str:
    """`@target/<dir>` made the path of `<dir>` inside the served model's directory; an error naming `what` where
    `<dir>` is empty or leaves the model's directory, or does not exist in a local model directory (with `hint`)."""
    sub = value[len(SELF_DRAFT) + 1 :]
    if not sub or ".." in Path(sub).parts:
        raise ValueError(f"{what}: name a directory inside the model's" + (f", {example}" if example else ""))
    local = Path(model_path)
    if local.is_dir() and not (local / sub).is_dir():
        raise ValueError(f"{what}: {local / sub} does not exist ({hint})")
    return f"{model_path.rstrip('/')}/{sub}"


def model_args(spec: CohortFile, model_path: str, model: ModelSpec | None = None) -> dict[str, Any]:
    """Server flags of `model` (default: the file's default model) served from `model_path`."""
    m = model or spec.model
    args: dict[str, Any] = {
        "model": model_path,
        "served_model_name": m.served_name,
        "tokenizer": m.tokenizer,
        "dtype": None if m.dtype == "auto" else m.dtype,
        "max_model_len": m.max_model_len,
        "trust_remote_code": True if m.trust_remote_code else None,
        "chat_template": str(spec.resolve(m.chat_template)) if m.chat_template else None,
        "reasoning_parser": m.reasoning_parser,
    }
    if m.tool_call_parser:
        args.update(enable_auto_tool_choice=True, tool_call_parser=m.tool_call_parser)
    return args


def _server(
    spec: CohortFile, cohort: Cohort, model_path: str, role: str, index: int, extra: dict[str, Any]
) -> ProcessCommand:
    args = model_args(spec, model_path, cohort.model)
    args.update(host="{host}", port=f"{{port.{role}.{index}}}")
    args.update(extra)
    spec_cfg = cohort.speculative.vllm_config()
    if spec_cfg is not None:
        if "model" in spec_cfg:  # self-drafting, or a head beside the served model
            spec_cfg["model"] = draft_model_path(spec_cfg["model"], model_path)
        args["speculative_config"] = spec_cfg
    args.update(cohort.server_args)
    if "lora_modules" in args:
        args["lora_modules"] = lora_modules_paths(args["lora_modules"], model_path)
    gpus = int(extra.get("tensor_parallel_size", 1)) * int(extra.get("data_parallel_size", 1))
    argv = ["{python}", "-m", SERVER_MODULE, *to_flags(args)]
    return ProcessCommand(role=role, index=index, argv=argv, env=dict(cohort.env), gpus=gpus)


# vLLM's KV roles: prefill workers produce KV caches, decode workers consume them (NixlConnector treats the
# role as a placeholder and lets the proxy decide; file-based connectors such as ExampleConnector need it).
KV_ROLES = {"prefill": "kv_producer", "decode": "kv_consumer"}


def kv_transfer_config(topo: PDTopology, role: str | None = None) -> dict[str, Any]:
    """`--kv-transfer-config` of a P/D worker; `kv_connector_extra` keys override (e.g. `kv_role`)."""
    cfg: dict[str, Any] = {"kv_connector": topo.kv_connector, "kv_role": KV_ROLES.get(role or "", "kv_both")}
    cfg.update(topo.kv_connector_extra)
    return cfg


def cohort_commands(spec: CohortFile, cohort: Cohort, model_path: str) -> list[ProcessCommand]:
    """Every process a cohort's stack runs, in start order (workers before the router)."""
    topo = cohort.topology
    if not isinstance(topo, PDTopology):
        sizes = {"tensor_parallel_size": topo.tensor_parallel_size, "data_parallel_size": topo.data_parallel_size}
        return [_server(spec, cohort, model_path, "server", 0, {k: v for k, v in sizes.items() if v != 1})]
    procs: list[ProcessCommand] = []
    for role, group in (("prefill", topo.prefill), ("decode", topo.decode)):
        for i in range(group.workers):
            extra: dict[str, Any] = {"kv_transfer_config": kv_transfer_config(topo, role)}
            if group.tensor_parallel_size != 1:
                extra["tensor_parallel_size"] = group.tensor_parallel_size
            extra.update(group.args)
            procs.append(_server(spec, cohort, model_path, role, i, extra))
    procs.append(router_command(topo))
    return procs


# vLLM connector -> vllm-router's `--kv-connector` (the router speaks each connector's handshake).
ROUTER_KV_CONNECTORS = {"NixlConnector": "nixl", "MooncakeConnector": "mooncake", "MoRIIOConnector": "moriio"}


def router_command(topo: PDTopology) -> ProcessCommand:
    urls: list[str] = []
    for role, group in (("prefill", topo.prefill), ("decode", topo.decode)):
        for i in range(group.workers):
            urls += [f"--{role}", f"{{url.{role}.{i}}}"]
    if topo.router.kind == "vllm-router":
        # vllm-router 0.1.x: `--vllm-pd-disaggregation --prefill URL [BOOTSTRAP_PORT] --decode URL`
        argv = ["vllm-router", "--vllm-pd-disaggregation", *urls, "--host", "{host}", "--port", "{port.router.0}"]
        if topo.kv_connector in ROUTER_KV_CONNECTORS:
            argv += ["--kv-connector", ROUTER_KV_CONNECTORS[topo.kv_connector]]
    else:
        argv = ["{python}", "-m", "eval.stacks.toy_proxy", *urls, "--host", "{host}", "--port", "{port.router.0}"]
    return ProcessCommand(role="router", index=0, argv=[*argv, *to_flags(topo.router.args)])


def render(argv: list[str], mapping: dict[str, str]) -> list[str]:
    """Fill placeholders; an unknown placeholder is a bug, so it raises KeyError."""
    return [_PLACEHOLDER.sub(lambda m: mapping[m.group(1)], a) for a in argv]
