"""Command lines of P/D stacks: vllm-router flags as the real `vllm-router` CLI takes them, KV roles per worker."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from eval.spec.load import load_spec
from eval.stacks.commands import cohort_commands, render
from eval.stacks.router import RouterNotFound, find_vllm_router

COHORTS = Path(__file__).parents[3] / "cohorts"


def _pd_commands(*overrides: str):
    loaded = load_spec([str(COHORTS / "smollm2-cpu.yaml"), *overrides])
    cohort = next(c for c in loaded.cohorts if c.name == "stock-off-pd")
    return cohort_commands(loaded.spec, cohort, "/models/smollm2")


def test_pd_workers_have_kv_roles_and_the_router_comes_last() -> None:
    cmds = _pd_commands()
    assert [c.key for c in cmds] == ["prefill.0", "decode.0", "router.0"]
    roles = []
    for c in cmds[:2]:
        cfg = json.loads(c.argv[c.argv.index("--kv-transfer-config") + 1])
        assert cfg["kv_connector"] == "NixlConnector"
        roles.append(cfg["kv_role"])
    assert roles == ["kv_producer", "kv_consumer"]


def test_router_command_renders_urls() -> None:
    router = _pd_commands()[-1]
    mapping = {
        "host": "127.0.0.1",
        "port.router.0": "9000",
        "url.prefill.0": "http://h:1",
        "url.decode.0": "http://h:2",
    }
    argv = render(router.argv, mapping)
    assert argv[:2] == ["vllm-router", "--vllm-pd-disaggregation"]
    assert argv[argv.index("--prefill") + 1] == "http://h:1" and argv[argv.index("--decode") + 1] == "http://h:2"
    assert argv[argv.index("--kv-connector") + 1] == "nixl"


def test_router_flags_are_accepted_by_the_real_cli() -> None:
    try:
        exe = find_vllm_router(None)
    except RouterNotFound:
        pytest.skip("vllm-router not installed (it is in the dev extra)")
    help_text = subprocess.run([exe, "--help"], capture_output=True, text=True, check=True).stdout
    router = _pd_commands()[-1]
    for flag in (a for a in router.argv if a.startswith("--")):
        assert flag in help_text, flag


def test_toy_proxy_kind_runs_specquals_module() -> None:
    router = _pd_commands("topologies.pd.router.kind=toy-proxy")[-1]
    assert router.argv[:3] == ["{python}", "-m", "eval.stacks.toy_proxy"]
