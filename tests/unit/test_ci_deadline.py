"""tests/conftest.py's CI time budget: once SPECQUAL_TEST_DEADLINE has passed no test starts, and the summary counts
the tests left unstarted (stop 42's CI skipped 40 real-vLLM tests at the deadline, shown only in -ra's skip line)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHEAP = "tests/unit/classify/test_generated_files.py"


def _pytest(deadline: str | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("SPECQUAL_TEST_DEADLINE", "PYTEST_ADDOPTS")}
    if deadline is not None:
        env["SPECQUAL_TEST_DEADLINE"] = deadline
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", CHEAP]
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


def test_a_run_past_the_deadline_starts_nothing_and_says_so() -> None:
    done = _pytest("1")  # 1970: long passed
    assert done.returncode == 0, done.stdout[-2000:]
    assert "2 skipped" in done.stdout
    assert "2 tests never started (SPECQUAL_TEST_DEADLINE passed)" in done.stdout


def test_a_run_within_the_deadline_passes() -> None:
    done = _pytest(None)
    assert done.returncode == 0, done.stdout[-2000:]
    assert "2 passed" in done.stdout
    assert "never started" not in done.stdout
