"""The tiny Llama's `pard_token` option: config.json names the mask token of parallel drafting (vLLM refuses PARD
without it), a bad id is refused, and a model made without the option keeps the name (hash) it had."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eval.models.tiny_llama import generate


def test_pard_token_lands_in_the_config_and_the_default_hash_is_unchanged(tmp_path: Path) -> None:
    plain = generate(tmp_path, 0, {})
    assert plain.name == "tiny-llama-0bbe07086c3a4591"  # the name of every cached model and result so far
    assert "pard_token" not in json.loads((plain / "config.json").read_text())
    pard = generate(tmp_path, 0, {"pard_token": 0})
    assert pard.name != plain.name
    assert json.loads((pard / "config.json").read_text())["pard_token"] == 0


def test_a_pard_token_outside_the_vocabulary_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not a token id"):
        generate(tmp_path, 0, {"pard_token": 512})
