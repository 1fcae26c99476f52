"""A tiny NemotronH hybrid (Mamba2 + attention + MLP + one MTP layer) made locally, for tests and the CPU demo.

Everything is generated here, nothing is downloaded: a config vLLM serves as `NemotronHForCausalLM`, real random
weights (N(0, 0.1); norms 1 + N(0, 0.1)) written as safetensors, a byte-level BPE tokenizer trained with
`tokenizers` on a synthetic corpus, and a ChatML + Hermes-style tool-call chat template.

Why real random weights: vLLM's `--load-format dummy` draws U(-1e-3, 1e-3) with one seed for every tensor, so
greedy output barely depends on the recurrent state and a state bug stays invisible (see docs/trust/facts.md).

`generate(out_dir, seed, options)` returns the model directory; it is cached under `out_dir` by a hash of the
generator version, the seed and the options, so repeated calls are instant.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from eval.models.hf_files import build_once, from_options, write_tokenizer_files

GENERATOR_VERSION = 1
DONE_MARKER = "specqual-generated.json"
SPECIAL_TOKENS = ["<pad>", "<s>", "</s>", "<|im_start|>", "<|im_end|>"]
TOOL_TOKENS = ["<tool_call>", "</tool_call>", "<tools>", "</tools>", "<tool_response>", "</tool_response>"]
CHAT_TEMPLATE_FILE = Path(__file__).with_name("tiny_nemotron_h_chat.jinja")


@dataclass(frozen=True)
class TinyNemotronH:
    """The generator's options (cohort file: `model.generate.options`). Defaults follow docs/trust/facts.md."""

    pattern: str = "M-*M-"
    mtp_pattern: str = "*"
    hidden_size: int = 64
    vocab_size: int = 512
    num_attention_heads: int = 2
    num_key_value_heads: int = 1
    head_dim: int = 32  # CPU attention needs >= 32
    intermediate_size: int = 128
    mamba_num_heads: int = 4
    mamba_head_dim: int = 32
    n_groups: int = 1
    ssm_state_size: int = 16
    conv_kernel: int = 4
    chunk_size: int = 64
    weight_std: float = 0.1
    max_position_embeddings: int = 4096
    # The dtype config.json declares. vLLM's MTP drafter loads in the config's dtype, not the served one: a
    # bfloat16 server with float32 here dies at start-up ("mat1 and mat2 ... BFloat16 != float").
    torch_dtype: str = "float32"

    @classmethod
    def from_options(cls, options: dict[str, Any]) -> TinyNemotronH:
        return from_options(cls, "tiny-nemotron-h", options)


def cache_key(seed: int, opts: TinyNemotronH) -> str:
    template = CHAT_TEMPLATE_FILE.read_text(encoding="utf-8")
    hashed = asdict(opts)
    if hashed["torch_dtype"] == "float32":
        del hashed["torch_dtype"]  # float32 models keep the cache key they had before the option existed
    blob = json.dumps({"v": GENERATOR_VERSION, "seed": seed, "opts": hashed, "template": template}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def generate(out_dir: Path, seed: int, options: dict[str, Any]) -> Path:
    """Write (or reuse) the model directory under `out_dir` and return it."""
    opts = TinyNemotronH.from_options(dict(options))
    target = Path(out_dir) / f"tiny-nemotron-h-{cache_key(seed, opts)}"

    def write(tmp: Path) -> dict[str, Any]:
        _write_config(tmp, opts)
        _write_weights(tmp, opts, seed)
        _write_tokenizer(tmp, opts, seed)
        return {"seed": seed, "options": asdict(opts)}

    return build_once(target, DONE_MARKER, write)


def hf_config(opts: TinyNemotronH) -> dict[str, Any]:
    """config.json: NemotronH with the legacy pattern strings that vLLM and transformers both read."""
    return {
        "architectures": ["NemotronHForCausalLM"],
        "model_type": "nemotron_h",
        "torch_dtype": opts.torch_dtype,
        "vocab_size": opts.vocab_size,
        "hidden_size": opts.hidden_size,
        "hybrid_override_pattern": opts.pattern,
        "mtp_hybrid_override_pattern": opts.mtp_pattern,
        "num_hidden_layers": len(opts.pattern),
        "num_nextn_predict_layers": 1,
        "num_attention_heads": opts.num_attention_heads,
        "num_key_value_heads": opts.num_key_value_heads,
        "head_dim": opts.head_dim,
        "intermediate_size": opts.intermediate_size,
        "mlp_hidden_act": "relu2",
        "mamba_num_heads": opts.mamba_num_heads,
        "mamba_head_dim": opts.mamba_head_dim,
        "n_groups": opts.n_groups,
        "ssm_state_size": opts.ssm_state_size,
        "conv_kernel": opts.conv_kernel,
        "chunk_size": opts.chunk_size,
        "expand": 2,
        "use_conv_bias": True,
        "mamba_hidden_act": "silu",
        "layer_norm_epsilon": 1e-5,
        "max_position_embeddings": opts.max_position_embeddings,
        "tie_word_embeddings": False,
        "pad_token_id": 0,
        "bos_token_id": 1,
        "eos_token_id": 4,
        "mamba_ssm_cache_dtype": "float32",
    }


def _write_config(d: Path, opts: TinyNemotronH) -> None:
    (d / "config.json").write_text(json.dumps(hf_config(opts), indent=2) + "\n")
    gen = {"bos_token_id": 1, "eos_token_id": 4, "pad_token_id": 0}
    (d / "generation_config.json").write_text(json.dumps(gen, indent=2) + "\n")


def weight_shapes(opts: TinyNemotronH) -> dict[str, tuple[int, ...]]:
    """Checkpoint tensor names and shapes (HF NemotronH names; MTP layers under `mtp.layers.`)."""
    h, inter = opts.hidden_size, opts.mamba_num_heads * opts.mamba_head_dim
    conv_dim = inter + 2 * opts.n_groups * opts.ssm_state_size
    shapes: dict[str, tuple[int, ...]] = {
        "backbone.embeddings.weight": (opts.vocab_size, h),
        "backbone.norm_f.weight": (h,),
        "lm_head.weight": (opts.vocab_size, h),
    }
    for i, kind in enumerate(opts.pattern):
        p = f"backbone.layers.{i}."
        shapes[p + "norm.weight"] = (h,)
        shapes.update({p + "mixer." + k: v for k, v in _mixer_shapes(kind, opts, inter, conv_dim).items()})
    for i, kind in enumerate(opts.mtp_pattern):
        p = f"mtp.layers.{i}."
        shapes[p + "norm.weight"] = (h,)
        shapes.update({p + "mixer." + k: v for k, v in _mixer_shapes(kind, opts, inter, conv_dim).items()})
        if i == 0:
            shapes.update({p + "enorm.weight": (h,), p + "hnorm.weight": (h,), p + "eh_proj.weight": (h, 2 * h)})
        if i == len(opts.mtp_pattern) - 1:
            shapes[p + "final_layernorm.weight"] = (h,)
    return shapes


def _mixer_shapes(kind: str, opts: TinyNemotronH, inter: int, conv_dim: int) -> dict[str, tuple[int, ...]]:
    h, nh = opts.hidden_size, opts.mamba_num_heads
    if kind == "M":
        return {
            "in_proj.weight": (2 * inter + 2 * opts.n_groups * opts.ssm_state_size + nh, h),
            "conv1d.weight": (conv_dim, 1, opts.conv_kernel),
            "conv1d.bias": (conv_dim,),
            "dt_bias": (nh,),
            "A_log": (nh,),
            "D": (nh,),
            "norm.weight": (inter,),
            "out_proj.weight": (h, inter),
        }
    if kind == "*":
        q, kv = opts.num_attention_heads * opts.head_dim, opts.num_key_value_heads * opts.head_dim
        return {"q_proj.weight": (q, h), "k_proj.weight": (kv, h), "v_proj.weight": (kv, h), "o_proj.weight": (h, q)}
    if kind == "-":
        return {"up_proj.weight": (opts.intermediate_size, h), "down_proj.weight": (h, opts.intermediate_size)}
    raise ValueError(f"pattern character {kind!r} is not supported (use M, -, *)")


def _write_weights(d: Path, opts: TinyNemotronH, seed: int) -> None:
    from safetensors.numpy import save_file

    rng = np.random.default_rng(seed)
    tensors: dict[str, np.ndarray] = {}
    for name, shape in weight_shapes(opts).items():
        values = rng.normal(0.0, opts.weight_std, size=shape)
        if name.endswith("norm.weight") or name.endswith("norm_f.weight") or "layernorm" in name:
            values += 1.0  # norms near 1 keep activations in range; the noise keeps them distinct
        tensors[name] = values.astype(np.float32)
    save_file(tensors, str(d / "model.safetensors"), metadata={"format": "pt"})


def _write_tokenizer(d: Path, opts: TinyNemotronH, seed: int, extra: Sequence[str] = ()) -> None:
    """The byte-level BPE tokenizer and its config files; `extra` tokens are added after the tool tokens (the
    vocabulary size stays `opts.vocab_size`: BPE learns that many fewer merges)."""
    from eval.models.tiny_nemotron_h_tokenizer import train_byte_level_bpe

    train_byte_level_bpe(d, opts.vocab_size, seed, SPECIAL_TOKENS, [*TOOL_TOKENS, *extra])
    write_tokenizer_files(d, CHAT_TEMPLATE_FILE.read_text(encoding="utf-8"), opts.max_position_embeddings)
