"""The PR #55178 backport applies to pristine vLLM 0.26.0 files with specqual's own patcher, and reverses cleanly."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from eval.stacks.patchfile import PatchError, apply_patch

REPO = Path(__file__).resolve().parents[3]
FIXTURES = REPO / "tests" / "fixtures" / "vllm-0.26.0"
BACKPORT = REPO / "cohorts" / "patches" / "pr55178-backport-v0.26.0.patch"
BACKENDS = "vllm/v1/attention/backends"
FILES = ("mamba_attn.py", "mamba2_attn.py")


def pristine_tree(root: Path) -> Path:
    """`root/vllm/v1/attention/backends/` holding the two 0.26.0 files as released."""
    target = root / BACKENDS
    target.mkdir(parents=True)
    for name in FILES:
        shutil.copyfile(FIXTURES / f"{name}.txt", target / name)
    return root


def test_fixtures_are_the_released_files() -> None:
    readme = (FIXTURES / "README.md").read_text()
    for name in FILES:
        digest = hashlib.sha256((FIXTURES / f"{name}.txt").read_bytes()).hexdigest()
        assert digest in readme, f"{name} differs from the hash recorded for the 0.26.0 wheel"
        assert (FIXTURES / f"{name}.txt").read_text().startswith("# SPDX-License-Identifier: Apache-2.0")


def test_backport_applies_to_pristine_and_adds_the_routing(tmp_path: Path) -> None:
    root = pristine_tree(tmp_path)
    edited = apply_patch(root, BACKPORT.read_text(), reverse=False, label=BACKPORT.name)
    assert edited == sorted(f"{BACKENDS}/{name}" for name in FILES)
    attn = (root / BACKENDS / "mamba_attn.py").read_text()
    assert "prefill_to_decode |= padded_prompt_tail_rows" in attn
    assert attn.count("num_decode_draft_tokens_cpu=num_decode_draft_tokens_cpu") == 1
    mamba2 = (root / BACKENDS / "mamba2_attn.py").read_text()
    assert 'num_decode_draft_tokens_cpu=kwargs.get("num_decode_draft_tokens_cpu")' in mamba2


def test_backport_reverses_to_the_released_bytes(tmp_path: Path) -> None:
    root = pristine_tree(tmp_path)
    apply_patch(root, BACKPORT.read_text(), reverse=False, label=BACKPORT.name)
    apply_patch(root, BACKPORT.read_text(), reverse=True, label=BACKPORT.name)
    for name in FILES:
        assert (root / BACKENDS / name).read_bytes() == (FIXTURES / f"{name}.txt").read_bytes()


def test_backport_does_not_apply_twice(tmp_path: Path) -> None:
    root = pristine_tree(tmp_path)
    apply_patch(root, BACKPORT.read_text(), reverse=False, label=BACKPORT.name)
    with pytest.raises(PatchError, match="does not apply"):
        apply_patch(root, BACKPORT.read_text(), reverse=False, label=BACKPORT.name)
