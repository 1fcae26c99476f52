"""Typed manifests of what specqual caches and ships, read back before reuse: a vLLM environment
(`specqual-env.json`), a patch overlay (`specqual-overlay.json`), an offline bundle (`manifest.json`), an unpacked
bundle's environment (`specqual-bundle.json`) and a converted model (`specqual-model.json`).

A manifest that does not read as its record is treated as absent (the cache entry is rebuilt).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from store.layout import SCHEMA_VERSION
from store.stack_records import PatchFile

ENV_MARKER = "specqual-env.json"
OVERLAY_MARKER = "specqual-overlay.json"
BUNDLE_MANIFEST = "manifest.json"
UNPACKED_MARKER = "specqual-bundle.json"
MODEL_MARKER = "specqual-model.json"


class EnvMarker(BaseModel):
    """`<cache>/envs/<key>/specqual-env.json`: a finished vLLM environment and what it was built from."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = Field(SCHEMA_VERSION, description="Version of the manifest's schema.")
    key: str = Field(description="The cache key (a hash of the inputs, recipe and Python version).")
    inputs: dict[str, Any] = Field(description="What the key was computed from (pip spec or wheel hash, extras).")
    requirements: list[str] = Field(description="What pip was asked to install.")
    lock: str | None = Field(None, description="The hashed lock file installed from, by name (null: resolved).")
    installer: str = Field(description="The installer used (uv or pip).")
    wheel_sha256: str | None = Field(description="sha256 of the vLLM wheel installed (null: not known).")


class OverlayMarker(BaseModel):
    """`<cache>/overlays/<build>-<key>/specqual-overlay.json`: a finished overlay of patched vLLM files."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = Field(SCHEMA_VERSION, description="Version of the manifest's schema.")
    source: str = Field(description="The vllm package the overlay was made from.")
    patches: list[PatchFile] = Field(description="Patches applied, in order.")
    patched_files: dict[str, str] = Field(description="Patched file (vllm/...) -> sha256.")


class BundleArchive(BaseModel):
    """The one archive of a bundle's wheels."""

    model_config = ConfigDict(extra="forbid")

    file: str = Field(description="The archive's file name in the bundle.")
    sha256: str = Field(description="Its sha256.")
    xz_preset: int = Field(description="The xz preset it was packed with.")


class BundleManifest(BaseModel):
    """`<bundle>/manifest.json`: an offline bundle's wheels and patches with their hashes."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = Field(SCHEMA_VERSION, description="Version of the manifest's schema.")
    build: str = Field(description="The build of the cohort file it was packed from.")
    vllm_wheel: str = Field(description="File name of the vLLM wheel under wheels/.")
    source_wheel_sha256: str = Field(description="sha256 of the vLLM wheel before slimming.")
    no_deps: bool = Field(description="Whether unpacking installs with --no-deps (exact pins were given).")
    gpu_arch: str | None = Field(description="The GPU architecture the wheel was slimmed for (null: not slimmed).")
    slim: dict[str, Any] | None = Field(description="The slimming report (members dropped, sizes).")
    dropped_patterns: list[str] = Field(default_factory=list, description="Extra member patterns left out.")
    dependency_sources: dict[str, str] = Field(
        default_factory=dict, description="Dependency wheel -> sha256 as downloaded (before re-storing)."
    )
    python_version: str | None = Field(description="The Python version the wheels were fetched for.")
    wheels: dict[str, str] = Field(description="Wheel file name -> sha256 of the file in the bundle.")
    patches: list[PatchFile] = Field(description="Patches under patches/, in order.")
    archive: BundleArchive | None = Field(None, description="The wheels' archive, when they travel as one file.")

    def record(self) -> dict[str, Any]:
        """The JSON object: `archive` only when there is one."""
        return self.model_dump(mode="json", exclude={"archive"} if self.archive is None else set())


class UnpackedBundle(BaseModel):
    """`<env>/specqual-bundle.json`: an environment made by `specqual stack unpack`."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = Field(SCHEMA_VERSION, description="Version of the manifest's schema.")
    vllm: str = Field(description="The installed distribution and version, e.g. `vllm 0.11.0`.")
    python: str = Field(description="The environment's interpreter.")
    overlay: str = Field(description="The overlay directory with the bundle's patches.")
    patched_files: dict[str, str] = Field(description="Patched file -> sha256.")
    wheel_sha256: str | None = Field(description="sha256 of the vLLM wheel it was installed from.")
    gpu_arch: str | None = Field(description="The GPU architecture of a slimmed wheel.")


class ModelManifest(BaseModel):
    """`specqual-model.json` of a model converted from released weights (eval.models.smollm2)."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = Field(SCHEMA_VERSION, description="Version of the manifest's schema.")
    generator: str = Field(description="The model generator's name.")
    seed: int = Field(description="The seed asked for (the weights are the released ones).")
    gguf: str = Field(description="sha256 of the GGUF file converted.")
    converter: int | str = Field(description="The converter's version.")
    template: str = Field(description="sha256 of the chat template.")
    source: str = Field(description="The package the GGUF came from.")
