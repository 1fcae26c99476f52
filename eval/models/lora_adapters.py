"""LoRA adapters for a generated tiny Llama, written beside it (issue 27: requests that name an adapter).

`write_adapters(model_dir, names, seed)` writes `model_dir/<name>/` for each name: a PEFT LoRA adapter
(`adapter_config.json` + `adapter_model.safetensors`) of rank RANK on the attention projections of every layer,
weights N(0, STD) seeded by the model's seed and the adapter's name (every adapter differs from the base model and
from the others: a request served with the wrong adapter, or without it, gets other tokens). A server loads them
with `--enable-lora --lora-modules <name>=<model_dir>/<name>` (cohort files: `lora_modules: ["<name>=@target/<name>"]`,
eval/stacks/commands.py), and a request names one as its `model`.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np

RANK = 8
ALPHA = 16
STD = 0.2
TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj")
NAME_CHARS = set("abcdefghijklmnopqrstuvwxyz0123456789-_")


def adapter_config(model_dir: Path) -> dict[str, Any]:
    return {
        "peft_type": "LORA",
        "task_type": "CAUSAL_LM",
        "base_model_name_or_path": str(model_dir),
        "r": RANK,
        "lora_alpha": ALPHA,
        "lora_dropout": 0.0,
        "target_modules": list(TARGETS),
        "bias": "none",
        "fan_in_fan_out": False,
        "modules_to_save": None,
        "use_rslora": False,
        "use_dora": False,
    }


def adapter_shapes(cfg: dict[str, Any]) -> dict[str, tuple[int, int]]:
    """(out, in) of each targeted projection of the model's config.json, by module path."""
    h = int(cfg["hidden_size"])
    head_dim = int(cfg.get("head_dim") or h // int(cfg["num_attention_heads"]))
    q, kv = int(cfg["num_attention_heads"]) * head_dim, int(cfg["num_key_value_heads"]) * head_dim
    dims = {"q_proj": (q, h), "k_proj": (kv, h), "v_proj": (kv, h), "o_proj": (h, q)}
    return {f"model.layers.{i}.self_attn.{t}": dims[t] for i in range(int(cfg["num_hidden_layers"])) for t in TARGETS}


def adapter_tensors(cfg: dict[str, Any], name: str, seed: int) -> dict[str, np.ndarray]:
    """PEFT's tensors (`base_model.model.<module>.lora_A.weight` (r, in), `lora_B.weight` (out, r))."""
    digest = hashlib.sha256(f"{int(seed)}:lora:{name}".encode()).digest()
    rng = np.random.default_rng(int.from_bytes(digest[:8], "big"))
    out: dict[str, np.ndarray] = {}
    for module, (n_out, n_in) in adapter_shapes(cfg).items():
        p = f"base_model.model.{module}"
        out[p + ".lora_A.weight"] = rng.normal(0.0, STD, size=(RANK, n_in)).astype(np.float32)
        out[p + ".lora_B.weight"] = rng.normal(0.0, STD, size=(n_out, RANK)).astype(np.float32)
    return out


def write_adapters(model_dir: Path, names: tuple[str, ...], seed: int) -> None:
    """Write each adapter of `names` as `model_dir/<name>/` beside the model."""
    from safetensors.numpy import save_file

    if len(set(names)) != len(names):
        raise ValueError(f"LoRA adapter names repeat: {list(names)}")
    for name in names:
        if not name or not set(name) <= NAME_CHARS:
            raise ValueError(f"LoRA adapter name {name!r}: use lowercase letters, digits, '-' and '_'")
    cfg = json.loads((model_dir / "config.json").read_text())
    for name in names:
        d = model_dir / name
        d.mkdir()
        (d / "adapter_config.json").write_text(json.dumps(adapter_config(model_dir), indent=2) + "\n")
        save_file(adapter_tensors(cfg, name, seed), str(d / "adapter_model.safetensors"), metadata={"format": "pt"})
