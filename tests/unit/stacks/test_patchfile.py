"""The pure-Python patcher: forward, reverse, offsets, rejected hunks; checked against GNU patch where present."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from eval.stacks.patchfile import PatchError, apply_patch, parse

ORIGINAL = "".join(f"line {i}\n" for i in range(1, 21))
PATCH = """Description text before the diff is ignored.

--- a/pkg/mod.py
+++ b/pkg/mod.py
@@ -3,3 +3,4 @@
 line 3
 line 4
+inserted after 4
 line 5
@@ -10,3 +11,3 @@
 line 10
-line 11
+changed 11
 line 12
"""


def _tree(tmp_path: Path, text: str = ORIGINAL) -> Path:
    (tmp_path / "pkg").mkdir(parents=True)
    (tmp_path / "pkg" / "mod.py").write_text(text)
    return tmp_path


def test_parse_reads_files_and_hunks() -> None:
    files = parse(PATCH)
    assert [f.target() for f in files] == ["pkg/mod.py"]
    assert [h.old_start for h in files[0].hunks] == [3, 10]


def test_forward_then_reverse_restores_the_file(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    assert apply_patch(root, PATCH, reverse=False, label="p") == ["pkg/mod.py"]
    patched = (root / "pkg/mod.py").read_text()
    assert "inserted after 4\n" in patched and "changed 11\n" in patched and "line 11\n" not in patched
    apply_patch(root, PATCH, reverse=True, label="p")
    assert (root / "pkg/mod.py").read_text() == ORIGINAL


@pytest.mark.skipif(shutil.which("patch") is None, reason="GNU patch not installed")
def test_same_result_as_gnu_patch(tmp_path: Path) -> None:
    ours, gnu = _tree(tmp_path / "ours"), _tree(tmp_path / "gnu")
    apply_patch(ours, PATCH, reverse=False, label="p")
    subprocess.run(["patch", "-p1", "-s"], input=PATCH, text=True, cwd=gnu, check=True)
    assert (ours / "pkg/mod.py").read_text() == (gnu / "pkg/mod.py").read_text()


def test_hunk_found_at_an_offset(tmp_path: Path) -> None:
    root = _tree(tmp_path, "extra a\nextra b\n" + ORIGINAL)
    apply_patch(root, PATCH, reverse=False, label="p")
    assert "changed 11" in (root / "pkg/mod.py").read_text()


def test_rejected_hunk_is_shown_and_nothing_is_written(tmp_path: Path) -> None:
    root = _tree(tmp_path, ORIGINAL.replace("line 11\n", "line eleven\n"))
    before = (root / "pkg/mod.py").read_text()
    with pytest.raises(PatchError) as err:
        apply_patch(root, PATCH, reverse=False, label="fix.patch")
    assert "-line 11" in str(err.value) and "fix.patch" in str(err.value)
    assert (root / "pkg/mod.py").read_text() == before  # the first hunk applied in memory only


def test_reverse_of_unapplied_patch_is_rejected(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    with pytest.raises(PatchError, match="reverse"):
        apply_patch(root, PATCH, reverse=True, label="p")


def test_missing_file_and_garbage_are_errors(tmp_path: Path) -> None:
    with pytest.raises(PatchError, match="not found"):
        apply_patch(tmp_path, PATCH, reverse=False, label="p")
    with pytest.raises(PatchError, match="no file changes"):
        parse("just some text\n")


def test_replaces_files_instead_of_editing_hard_links(tmp_path: Path) -> None:
    root = _tree(tmp_path / "root")
    original = tmp_path / "original.py"
    original.write_text(ORIGINAL)
    (root / "pkg/mod.py").unlink()
    (root / "pkg/mod.py").hardlink_to(original)
    apply_patch(root, PATCH, reverse=False, label="p")
    assert original.read_text() == ORIGINAL
    assert "changed 11" in (root / "pkg/mod.py").read_text()


def test_the_pr55178_patch_parses() -> None:
    patch = Path(__file__).parents[3] / "cohorts/patches/pr55178-fix-v0.32.0.patch"
    files = parse(patch.read_text())
    assert {f.target() for f in files} == {
        "vllm/v1/attention/backends/mamba2_attn.py",
        "vllm/v1/attention/backends/mamba_attn.py",
    }
