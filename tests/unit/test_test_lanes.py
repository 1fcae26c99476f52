"""scripts/test.sh, the test command: the real-vLLM tier (`vllm`, not `docker`, not `slurm`) runs in a second pytest
process beside the rest, both lanes' outcomes decide the exit status, and the second lane's output is printed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SUITE = """
import pytest

def test_plain():
    assert PLAIN

@pytest.mark.vllm
def test_on_vllm():
    assert ON_VLLM

@pytest.mark.vllm
@pytest.mark.slurm
def test_on_vllm_in_slurm():
    pass
"""


def _run(tmp_path: Path, plain: bool, on_vllm: bool, *args: str) -> subprocess.CompletedProcess[str]:
    suite = tmp_path / "suite"
    suite.mkdir(exist_ok=True)
    (suite / "pytest.ini").write_text("[pytest]\nmarkers =\n    vllm: x\n    slurm: x\n    docker: x\n")
    (suite / "test_lanes.py").write_text(SUITE.replace("PLAIN", str(plain)).replace("ON_VLLM", str(on_vllm)))
    env = {k: v for k, v in os.environ.items() if k not in ("SPECQUAL_TEST_DEADLINE", "PYTEST_ADDOPTS")}
    env |= {"SPECQUAL_TEST_PYTHON": sys.executable, "SPECQUAL_TEST_LOG": str(tmp_path / "lane2.log")}
    cmd = ["bash", str(ROOT / "scripts" / "test.sh"), "-p", "no:cacheprovider", "--rootdir", str(suite), str(suite)]
    return subprocess.run([*cmd, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


def test_each_test_runs_in_its_lane_once(tmp_path: Path) -> None:
    done = _run(tmp_path, True, True, "-rA")
    assert done.returncode == 0, done.stdout[-3000:]
    lane1, lane2 = done.stdout.split("=== real-vLLM lane", 1)
    passed = [
        [ln.rsplit("::", 1)[1] for ln in lane.splitlines() if ln.startswith("PASSED ")] for lane in (lane1, lane2)
    ]
    assert passed == [["test_plain", "test_on_vllm_in_slurm"], ["test_on_vllm"]]


def test_a_failure_in_either_lane_fails_the_command(tmp_path: Path) -> None:
    assert _run(tmp_path, True, False).returncode == 1
    assert _run(tmp_path, False, True).returncode == 1


def test_a_marker_expression_runs_one_process(tmp_path: Path) -> None:
    done = _run(tmp_path, True, False, "-m", "not vllm")
    assert done.returncode == 0 and "real-vLLM lane" not in done.stdout
