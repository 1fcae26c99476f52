"""The LoRA adapters a generated tiny Llama carries (eval/models/lora_adapters.py): PEFT files of the right shapes,
seeded, each different; a model without them keeps its name; `--lora-modules <name>=@target/<dir>` resolves to
the adapter beside the served model."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import load_file

from eval.models.lora_adapters import RANK, TARGETS, adapter_shapes, write_adapters
from eval.models.tiny_llama import generate
from eval.stacks.commands import lora_modules_paths


def test_adapters_are_peft_files_beside_the_model(tmp_path: Path) -> None:
    plain = generate(tmp_path, 0, {"pard_token": 0})
    model = generate(tmp_path, 0, {"pard_token": 0, "lora_adapters": ["lora-a", "lora-b"]})
    assert model != plain and not (plain / "lora-a").exists()
    base = load_file(str(model / "model.safetensors"))
    assert all(np.array_equal(v, load_file(str(plain / "model.safetensors"))[k]) for k, v in base.items())
    cfg = json.loads((model / "config.json").read_text())
    shapes = adapter_shapes(cfg)
    assert len(shapes) == cfg["num_hidden_layers"] * len(TARGETS)
    tensors = {}
    for name in ("lora-a", "lora-b"):
        conf = json.loads((model / name / "adapter_config.json").read_text())
        assert conf["peft_type"] == "LORA" and conf["r"] == RANK and conf["target_modules"] == list(TARGETS)
        tensors[name] = load_file(str(model / name / "adapter_model.safetensors"))
        for module, (n_out, n_in) in shapes.items():
            assert tensors[name][f"base_model.model.{module}.lora_A.weight"].shape == (RANK, n_in)
            assert tensors[name][f"base_model.model.{module}.lora_B.weight"].shape == (n_out, RANK)
    key = next(iter(tensors["lora-a"]))
    assert not np.array_equal(tensors["lora-a"][key], tensors["lora-b"][key])
    again = generate(tmp_path / "again", 0, {"pard_token": 0, "lora_adapters": ["lora-a"]})
    assert np.array_equal(load_file(str(again / "lora-a" / "adapter_model.safetensors"))[key], tensors["lora-a"][key])


def test_adapter_names_are_checked(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(ValueError, match="repeat"):
        write_adapters(tmp_path, ("a", "a"), 0)
    with pytest.raises(ValueError, match="lowercase"):
        write_adapters(tmp_path, ("../x",), 0)


def test_lora_modules_resolve_inside_the_served_model(tmp_path: Path) -> None:
    (tmp_path / "lora-a").mkdir()
    got = lora_modules_paths(["lora-a=@target/lora-a", "other=/abs/path"], str(tmp_path))
    assert got == [f"lora-a={tmp_path}/lora-a", "other=/abs/path"]
    assert lora_modules_paths(None, str(tmp_path)) is None
    with pytest.raises(ValueError, match="does not exist"):
        lora_modules_paths(["b=@target/lora-b"], str(tmp_path))
    with pytest.raises(ValueError, match="inside"):
        lora_modules_paths(["b=@target/../x"], str(tmp_path))
