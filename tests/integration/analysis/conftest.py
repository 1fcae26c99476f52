"""Synthetic runs for the analysis's real-process tests: the motivating 500 x 3 x 4 run and a small one."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures.synth_results import MOTIVATING_RESOLVED, make_run

ROOT = Path(__file__).resolve().parents[3]


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run `python ARGS` from the repository root, as CI and users do."""
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=ROOT, check=False, env=env)


@pytest.fixture(scope="session")
def motivating_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """500 instances x 3 repeats x 4 cohorts with the resolve counts of vLLM PR 55178's qualification."""
    return make_run(tmp_path_factory.mktemp("runs") / "pr55178", instances=500, repeats=3, seed=0)


@pytest.fixture(scope="session")
def motivating_report(motivating_run: Path) -> subprocess.CompletedProcess[str]:
    """`specqual report RUN --fail-on FAIL` on the motivating run (writes into the run directory)."""
    return cli("-m", "eval.cli", "report", str(motivating_run), "--fail-on", "FAIL")


@pytest.fixture(scope="session")
def small_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    counts = {k: round(v * 40 / 500) for k, v in MOTIVATING_RESOLVED.items()}
    return make_run(tmp_path_factory.mktemp("runs") / "small", instances=40, resolved_counts=counts, seed=7)
