"""The tiny Llama's `think_tokens` option: `<think>` and `</think>` become tokens of their own (a reasoning parser
needs them), inside the same vocabulary size, and a model made without the option keeps the name (hash) it had."""

from __future__ import annotations

import json
from pathlib import Path

from eval.models.tiny_llama import generate


def test_think_tokens_are_single_tokens_and_the_default_hash_is_unchanged(tmp_path: Path) -> None:
    from tokenizers import Tokenizer

    plain = generate(tmp_path, 0, {})
    assert plain.name == "tiny-llama-0bbe07086c3a4591"  # the name of every cached model and result so far
    think = generate(tmp_path, 0, {"think_tokens": True})
    assert think.name != plain.name
    tok = Tokenizer.from_file(str(think / "tokenizer.json"))
    start, end = tok.token_to_id("<think>"), tok.token_to_id("</think>")
    vocab = json.loads((think / "config.json").read_text())["vocab_size"]
    assert start is not None and end is not None and max(start, end) < vocab == tok.get_vocab_size()
    assert tok.encode("a <think> b </think>").ids.count(end) == 1
    assert Tokenizer.from_file(str(plain / "tokenizer.json")).token_to_id("<think>") is None


def test_think_end_scale_scales_only_the_end_of_reasoning_row(tmp_path: Path) -> None:
    import numpy as np
    import pytest
    from safetensors.numpy import load_file
    from tokenizers import Tokenizer

    think = generate(tmp_path, 0, {"think_tokens": True})
    scaled = generate(tmp_path, 0, {"think_tokens": True, "think_end_scale": 1.5})
    assert scaled.name != think.name
    end = Tokenizer.from_file(str(scaled / "tokenizer.json")).token_to_id("</think>")
    a, b = load_file(str(think / "model.safetensors")), load_file(str(scaled / "model.safetensors"))
    assert np.allclose(b["lm_head.weight"][end], 1.5 * a["lm_head.weight"][end])
    b["lm_head.weight"][end] = a["lm_head.weight"][end]
    assert all(np.array_equal(a[k], b[k]) for k in a)
    with pytest.raises(ValueError, match="needs think_tokens"):
        generate(tmp_path, 0, {"think_end_scale": 1.5})
