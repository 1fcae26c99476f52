"""The bug zoo's invariants: one canary configuration, one patch per bug that applies, probes that are the same
on every cohort, and the completions' logprobs parsed with token ids (issue 16)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from eval.canary.client import Reply, _take_chat_logprobs, _take_logprobs
from eval.canary.prompts import PromptBook
from eval.canary.sampler import CHUNK_TAILS, chunked_length, sampler_params
from eval.spec.load import load_spec

ROOT = Path(__file__).resolve().parents[3]
ZOO = [ROOT / "cohorts" / "bugzoo-cpu.yaml", ROOT / "cohorts" / "bugzoo-mamba-cpu.yaml"]


def test_one_canary_configuration_for_every_zoo_build() -> None:
    loaded = [load_spec([str(p)]) for p in ZOO]
    blocks = [ld.spec.workloads.canary.model_dump(exclude={"reference"}) for ld in loaded]  # type: ignore[union-attr]
    assert blocks[0] == blocks[1]
    args = [{k: v for k, v in ld.spec.server.args.items() if k != "mamba_cache_mode"} for ld in loaded]
    assert args[0] == args[1]  # the same server settings too (the Mamba file adds its cache mode)


def test_every_zoo_patch_names_its_pr_and_what_it_restores() -> None:
    for patch in sorted((ROOT / "cohorts" / "patches").glob("zoo-pr*.patch")):
        head = patch.read_text().split("\n--- ", 1)[0]
        pr = patch.name.split("-")[1].removeprefix("pr")
        assert f"#{pr}" in head, patch.name
        assert "re-creation" in head or "verbatim" in head, patch.name


def test_sampler_probes_are_the_same_on_every_cohort() -> None:
    book = PromptBook(lambda text: [len(w) * 7 + i % 5 for i, w in enumerate(text.split())], seed=0)
    ctx = SimpleNamespace(book=book)
    a, b = sampler_params(ctx, 3, 32), sampler_params(ctx, 3, 32)
    assert a == b
    assert a["min_tokens"]["min_tokens"] == 16 and a["min_tokens"]["stop_token_ids"]
    assert a["penalties"] == {"presence_penalty": 1.5, "frequency_penalty": 1.0}
    assert "logit_bias" not in str(a)  # vLLM 0.32 refuses logit_bias with speculative decoding (HTTP 400)


def test_chunked_prompts_leave_a_last_chunk_of_at_most_k_plus_one() -> None:
    assert [chunked_length(64, t) - 64 for t in CHUNK_TAILS] == [1, 2, 3, 4, 5, 6]


def test_completion_logprobs_are_keyed_by_token_id() -> None:
    reply = Reply()
    _take_logprobs(reply, {"token_logprobs": [-0.1], "top_logprobs": [{"token_id:7": -0.1, "token_id:9": -2.0}]})
    _take_logprobs(reply, {"token_logprobs": [-0.3], "top_logprobs": [{"token_id:8": -0.3}]})  # a stream's chunk
    assert reply.token_logprobs == [-0.1, -0.3]
    assert reply.top_logprobs == [{"7": -0.1, "9": -2.0}, {"8": -0.3}]
    _take_logprobs(reply, {"token_logprobs": [-0.2], "top_logprobs": [{"token_id:8": -0.2, "token_id:4": None}]})
    assert reply.top_logprobs[-1] == {"8": -0.2}  # -inf comes back as null (seen on the H200): dropped
    chat = Reply()
    content = [{"token": "token_id:5", "logprob": -0.2, "top_logprobs": [{"token": "token_id:5", "logprob": -0.2}]}]
    _take_chat_logprobs(chat, {"content": content})
    assert chat.token_logprobs == [-0.2] and chat.top_logprobs == [{"5": -0.2}]


def test_self_drafting_names_the_served_model_as_its_draft() -> None:
    import json

    from eval.stacks.commands import cohort_commands

    loaded = load_spec([str(ZOO[0])])
    cohort = next(c for c in loaded.cohorts if c.name == "stock-self4")
    argv = cohort_commands(loaded.spec, cohort, "/models/tiny-llama-x")[0].argv
    spec = json.loads(argv[argv.index("--speculative-config") + 1])
    assert spec == {"method": "draft_model", "model": "/models/tiny-llama-x", "num_speculative_tokens": 4}
