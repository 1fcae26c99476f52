"""A tiny random Llama made locally: the self-drafting model of the bug zoo's sampler builds (issue 16).

Self-drafting (`draft_model` = the target) gets drafts accepted on a random model (docs/trust/bugzoo.md), so the
rejection sampler's draft-row code paths run: the place of the penalty, min_tokens and logprobs bugs. A tiny NemotronH
cannot serve there: vLLM turns any NemotronH draft with MTP layers into MTP, and random MTP layers accept almost
nothing. The tokenizer and chat template are the tiny NemotronH's (same generator code), so prompts built from
it are the same ids. Weights N(0, `weight_std`) (norms 1 + N(0, 0.1)); a larger spread than the NemotronH's 0.1
gives a peaked next-token distribution, like a trained model's (near-ties are then rare, as in practice).

`generate(out_dir, seed, options)` returns the model directory, cached by a hash of its inputs.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from eval.models.hf_files import build_once, from_options

GENERATOR_VERSION = 1
THINK_TOKENS = ("<think>", "</think>")
DONE_MARKER = "specqual-generated.json"


@dataclass(frozen=True)
class TinyLlama:
    num_hidden_layers: int = 2
    hidden_size: int = 64
    vocab_size: int = 512
    num_attention_heads: int = 2
    num_key_value_heads: int = 1
    head_dim: int = 32  # CPU attention needs >= 32
    intermediate_size: int = 128
    weight_std: float = 0.3
    max_position_embeddings: int = 4096
    torch_dtype: str = "float32"
    # `<think>` and `</think>` as tokens of their own, for a server with a reasoning parser (deepseek_r1, qwen3):
    # structured output then waits for the end of reasoning. Off by default: the models without it keep their hash.
    think_tokens: bool = False
    # `pard_token` in config.json: the mask token id of parallel drafting (PARD, `parallel_drafting: true` with
    # method draft_model), which vLLM refuses to start without. None (default) leaves config.json as before.
    pard_token: int | None = None
    # The `</think>` row of lm_head times this factor (needs think_tokens): 1.5 makes a random model end its
    # reasoning within 48 tokens after `<think>` on about 65% of prompts, at positions spread over 0-45, so the end
    # of reasoning lands inside accepted drafts (self-drafting). 1.0 (default) leaves the weights as before.
    think_end_scale: float = 1.0
    # Every layer's attention and MLP output (`o_proj`, `down_proj`) times this factor: well below 1, the model
    # mostly chooses its bigram token (the next token from the last token's embedding alone), which the EAGLE heads
    # of `draft_heads` predict, and lets its context decide the rest: with 0.002 the greedy choice is the bigram's
    # for 78% of tokens (0.003: 67%; 0.01: 35%), measured with transformers, 20 random prompts x 48 tokens. 1.0
    # (default): as before.
    context_scale: float = 1.0
    # Draft heads written beside the model, each in a subdirectory of that name, for `--speculative-config`'s
    # `model: "@target/eagle3"`: "eagle", "eagle3" and "hetero-vocab" (eval/models/draft_heads.py). Empty (default):
    # none.
    draft_heads: tuple[str, ...] = ()
    # LoRA adapters written beside the model, each in a subdirectory of that name (eval/models/lora_adapters.py),
    # for `--lora-modules <name>=@target/<name>`. Empty (default): none.
    lora_adapters: tuple[str, ...] = ()

    @classmethod
    def from_options(cls, options: dict[str, Any]) -> TinyLlama:
        return from_options(cls, "tiny-llama", options)


# Options added after the first models were made, with their defaults (left out of the hash at those values).
LATER_OPTIONS: dict[str, Any] = {
    "think_tokens": False,
    "pard_token": None,
    "think_end_scale": 1.0,
    "context_scale": 1.0,
    "draft_heads": (),
    "lora_adapters": (),
}


def generate(out_dir: Path, seed: int, options: dict[str, Any]) -> Path:
    """Write (or reuse) the model directory under `out_dir` and return it."""
    from eval.models.draft_heads import HEADS_VERSION, write_heads
    from eval.models.lora_adapters import write_adapters
    from eval.models.tiny_nemotron_h import TinyNemotronH, _write_tokenizer

    raw = dict(options)
    for key in ("draft_heads", "lora_adapters"):  # YAML lists
        if key in raw:
            raw[key] = tuple(raw[key])
    opts = TinyLlama.from_options(raw)
    if opts.think_end_scale != 1.0 and not opts.think_tokens:
        raise ValueError("think_end_scale needs think_tokens: true (it scales the `</think>` token's output row)")
    keyed = asdict(opts)
    for name, default in LATER_OPTIONS.items():  # at their default, the hash of every model made before them
        if keyed[name] == default:
            del keyed[name]
    if opts.draft_heads:
        keyed["heads_version"] = HEADS_VERSION
    blob = json.dumps({"v": GENERATOR_VERSION, "seed": seed, "opts": keyed}, sort_keys=True)
    target = Path(out_dir) / f"tiny-llama-{hashlib.sha256(blob.encode()).hexdigest()[:16]}"

    def write(tmp: Path) -> dict[str, Any]:
        (tmp / "config.json").write_text(json.dumps(hf_config(opts), indent=2) + "\n")
        gen = {"bos_token_id": 1, "eos_token_id": 4, "pad_token_id": 0}
        (tmp / "generation_config.json").write_text(json.dumps(gen, indent=2) + "\n")
        tok_opts = TinyNemotronH(vocab_size=opts.vocab_size, max_position_embeddings=opts.max_position_embeddings)
        _write_tokenizer(tmp, tok_opts, seed, THINK_TOKENS if opts.think_tokens else ())
        end_id = _token_id(tmp, THINK_TOKENS[1]) if opts.think_end_scale != 1.0 else None
        _write_weights(tmp, opts, seed, end_id)
        write_heads(tmp, opts.draft_heads, seed)
        write_adapters(tmp, opts.lora_adapters, seed)
        return {"seed": seed, "options": asdict(opts)}

    return build_once(target, DONE_MARKER, write)


def hf_config(opts: TinyLlama) -> dict[str, Any]:
    cfg: dict[str, Any] = {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "torch_dtype": opts.torch_dtype,
        "vocab_size": opts.vocab_size,
        "hidden_size": opts.hidden_size,
        "intermediate_size": opts.intermediate_size,
        "num_hidden_layers": opts.num_hidden_layers,
        "num_attention_heads": opts.num_attention_heads,
        "num_key_value_heads": opts.num_key_value_heads,
        "head_dim": opts.head_dim,
        "hidden_act": "silu",
        "rms_norm_eps": 1e-5,
        "rope_theta": 10000.0,
        "max_position_embeddings": opts.max_position_embeddings,
        "tie_word_embeddings": False,
        "pad_token_id": 0,
        "bos_token_id": 1,
        "eos_token_id": 4,
    }
    if opts.pard_token is not None:
        if not 0 <= opts.pard_token < opts.vocab_size:
            raise ValueError(f"pard_token {opts.pard_token} is not a token id (vocab_size {opts.vocab_size})")
        cfg["pard_token"] = opts.pard_token
    return cfg


def weight_shapes(opts: TinyLlama) -> dict[str, tuple[int, ...]]:
    h, inter = opts.hidden_size, opts.intermediate_size
    q, kv = opts.num_attention_heads * opts.head_dim, opts.num_key_value_heads * opts.head_dim
    shapes: dict[str, tuple[int, ...]] = {
        "model.embed_tokens.weight": (opts.vocab_size, h),
        "model.norm.weight": (h,),
        "lm_head.weight": (opts.vocab_size, h),
    }
    for i in range(opts.num_hidden_layers):
        p = f"model.layers.{i}."
        shapes.update(
            {
                p + "input_layernorm.weight": (h,),
                p + "post_attention_layernorm.weight": (h,),
                p + "self_attn.q_proj.weight": (q, h),
                p + "self_attn.k_proj.weight": (kv, h),
                p + "self_attn.v_proj.weight": (kv, h),
                p + "self_attn.o_proj.weight": (h, q),
                p + "mlp.gate_proj.weight": (inter, h),
                p + "mlp.up_proj.weight": (inter, h),
                p + "mlp.down_proj.weight": (h, inter),
            }
        )
    return shapes


def _token_id(d: Path, token: str) -> int:
    from tokenizers import Tokenizer

    tid = Tokenizer.from_file(str(d / "tokenizer.json")).token_to_id(token)
    if tid is None:
        raise ValueError(f"{token!r} is not a token of the generated tokenizer")
    return int(tid)


def _write_weights(d: Path, opts: TinyLlama, seed: int, think_end_id: int | None = None) -> None:
    from safetensors.numpy import save_file

    rng = np.random.default_rng(seed)
    tensors: dict[str, np.ndarray] = {}
    for name, shape in weight_shapes(opts).items():
        if "norm" in name:
            values = 1.0 + rng.normal(0.0, 0.1, size=shape)
        else:
            values = rng.normal(0.0, opts.weight_std, size=shape)
        tensors[name] = values.astype(np.float32)
    if opts.context_scale != 1.0:  # after every draw, like the option below
        for name, values in tensors.items():
            if name.endswith(("o_proj.weight", "down_proj.weight")):
                values *= opts.context_scale
    if think_end_id is not None:  # after every draw: the other weights are those of the model without the option
        tensors["lm_head.weight"][think_end_id] *= opts.think_end_scale
    save_file(tensors, str(d / "model.safetensors"), metadata={"format": "pt"})
