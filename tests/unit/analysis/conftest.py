"""Small synthetic results directories (tests/fixtures/synth_results.py) shared by the analysis unit tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fixtures.synth_results import MOTIVATING_RESOLVED, make_run

SMALL = 60


def scaled(n: int) -> dict[str, int]:
    return {k: round(v * n / 500) for k, v in MOTIVATING_RESOLVED.items()}


@pytest.fixture(scope="session")
def small_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """4 cohorts x 60 instances x 3 repeats, canary probes included, 5 infra failures in patched-off."""
    path = tmp_path_factory.mktemp("runs") / "small"
    return make_run(path, instances=SMALL, resolved_counts=scaled(SMALL), infra_counts={"patched-off": 5}, seed=3)


@pytest.fixture(scope="session")
def canary_only_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_run(tmp_path_factory.mktemp("runs") / "canary", instances=10, with_units=False, seed=4)


@pytest.fixture(scope="session")
def swebench_only_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("runs") / "swebench"
    return make_run(path, instances=SMALL, resolved_counts=scaled(SMALL), with_probes=False, seed=5)
