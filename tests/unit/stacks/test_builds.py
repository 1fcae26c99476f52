"""Builds over a real (tiny) environment: overlay by hard links, reverse patches, the version shim, verify."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from eval.spec.load import load_spec
from eval.spec.models import CohortFile
from eval.stacks.builds import ensure_build
from eval.stacks.envs import BuildError, sha256_file
from eval.stacks.probe import probe
from eval.stacks.verify import VerifyError, verify_launch

REL = "vllm/v1/attention/backends/mamba_attn.py"


@pytest.fixture
def make_spec(cohort_yaml: Callable[..., Path]) -> Callable[..., CohortFile]:
    def make(tmp_path: Path, env: Path, patch: str | None = None) -> CohortFile:
        path = cohort_yaml(tmp_path, env) if patch is None else cohort_yaml(tmp_path, env, patch)
        return load_spec([str(path)]).spec

    return make


def test_two_builds_share_one_install_and_differ_by_hash(
    tmp_path: Path, fake_env: Path, make_spec: Callable[..., CohortFile]
) -> None:
    spec = make_spec(tmp_path, fake_env)
    stock = ensure_build(spec, "stock", cache=tmp_path / "cache")
    reverted = ensure_build(spec, "reverted", cache=tmp_path / "cache")
    assert stock.python == reverted.python == fake_env / "bin" / "python"
    assert stock.patched_files == {}
    assert list(reverted.patched_files) == [REL]
    assert reverted.overlay is not None and stock.overlay is not None
    text = (reverted.overlay / REL).read_text()
    assert "fixed line" not in text
    # the installation is untouched, and unpatched files are hard links into it
    site = probe(stock.python).site_root
    assert "fixed line" in (site / REL).read_text()
    assert os.stat(stock.overlay / REL).st_ino == os.stat(site / REL).st_ino
    assert os.stat(reverted.overlay / "vllm/__init__.py").st_ino == os.stat(site / "vllm/__init__.py").st_ino
    assert reverted.patched_files[REL] == sha256_file(reverted.overlay / REL) != sha256_file(site / REL)


def test_launch_environment_imports_the_overlay_with_a_version(
    tmp_path: Path, fake_env: Path, make_spec: Callable[..., CohortFile]
) -> None:
    spec = make_spec(tmp_path, fake_env)
    build = ensure_build(spec, "reverted", cache=tmp_path / "cache")
    env = {**os.environ, **build.launch_env()}
    found = verify_launch(build, env)
    assert found.vllm_path == build.vllm_path
    assert found.vllm_version == "0.32.0"  # the dist-info shim answers importlib.metadata.version("vllm")
    assert found.hashes == build.patched_files
    # without the overlay on the path, the launch is refused
    with pytest.raises(VerifyError, match="would be imported from"):
        verify_launch(build, {k: v for k, v in os.environ.items() if k != "PYTHONPATH"})


def test_tampered_overlay_is_refused(tmp_path: Path, fake_env: Path, make_spec: Callable[..., CohortFile]) -> None:
    spec = make_spec(tmp_path, fake_env)
    build = ensure_build(spec, "reverted", cache=tmp_path / "cache")
    assert build.overlay is not None
    (build.overlay / REL).write_text("tampered\n")
    with pytest.raises(VerifyError, match="patched files differ"):
        verify_launch(build, {**os.environ, **build.launch_env()})


def test_patch_that_does_not_apply_shows_the_hunk(
    tmp_path: Path, fake_env: Path, make_spec: Callable[..., CohortFile]
) -> None:
    bad = "--- a/vllm/v1/attention/backends/mamba_attn.py\n+++ b/vllm/v1/attention/backends/mamba_attn.py\n"
    bad += "@@ -1,2 +1,3 @@\n line 1\n+not there\n line 2\n"
    spec = make_spec(tmp_path, fake_env, bad)
    with pytest.raises(BuildError) as err:
        ensure_build(spec, "reverted", cache=tmp_path / "cache")
    assert "+not there" in str(err.value) and "reverse" in str(err.value)
    assert not list((tmp_path / "cache" / "overlays").glob("reverted-*/vllm"))


def test_unknown_build_names_the_known_ones(
    tmp_path: Path, fake_env: Path, make_spec: Callable[..., CohortFile]
) -> None:
    spec = make_spec(tmp_path, fake_env)
    with pytest.raises(BuildError, match="known: stock, reverted"):
        ensure_build(spec, "nope", cache=tmp_path / "cache")
