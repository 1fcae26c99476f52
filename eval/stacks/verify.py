"""Prove, just before a launch, which vLLM code the server will run.

The probe runs the build's interpreter with the launch's exact environment: it must import `vllm` from the
build's overlay, `importlib.metadata.version("vllm")` must answer, and every patched file must hash to what the
build recorded. Any difference is a VerifyError and nothing starts.
"""

from __future__ import annotations

from eval.stacks.builds import BuildEnv
from eval.stacks.probe import ProbeError, ProbeResult, probe


class VerifyError(Exception):
    """The interpreter would not run the build's code."""


def verify_launch(build: BuildEnv, env: dict[str, str]) -> ProbeResult:
    """Check the launch environment against the build; return the probe (for provenance)."""
    if build.python is None or build.vllm_path is None:
        raise VerifyError(f"build {build.name} is not a local build (image {build.image})")
    try:
        found = probe(build.python, env=env, files=sorted(build.patched_files))
    except ProbeError as e:
        raise VerifyError(str(e)) from e
    if found.vllm_path.resolve() != build.vllm_path.resolve():
        raise VerifyError(f"build {build.name}: vllm would be imported from {found.vllm_path}, not {build.vllm_path}")
    if found.vllm_version is None:
        raise VerifyError(f"build {build.name}: importlib.metadata.version('vllm') fails in the launch environment")
    bad = {f: h for f, h in found.hashes.items() if h != build.patched_files[f]}
    if bad:
        raise VerifyError(f"build {build.name}: patched files differ from the build: {sorted(bad)}")
    return found
