"""`specqual serve` and `specqual probe` honour `executor: slurm`: the stack runs as a Slurm job on the test
cluster, not as a local process. The server is the stub of vLLM's (tests/doubles/fake_vllm.py); the real one
under Slurm runs in test_vllm_slurm.py."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from eval.executors.slurm import cluster
from eval.executors.slurm.record import jobs_of
from eval.models.tiny_nemotron_h import generate
from eval.store.atomic import read_json
from tests.doubles.fake_vllm import make_fake_env

pytestmark = pytest.mark.slurm
REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def cohort_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two cohorts on the fake vLLM environment, `executor: slurm`, a canary of one probe per mode."""
    tmp = tmp_path_factory.mktemp("slurm-cli")
    env = make_fake_env(tmp / "venv")
    model = generate(tmp / "models", 0, {})  # the canary tokenizes locally
    path = tmp / "slurm.yaml"
    path.write_text(
        f"""
schema_version: 1
name: slurm-cli
model: {{path: {model}, served_name: m}}
builds:
  stock: {{env: {env}}}
speculative:
  "off": {{method: null}}
  ngram: {{method: ngram, num_speculative_tokens: 2, prompt_lookup_min: 2, prompt_lookup_max: 4}}
server: {{device: cpu, startup_timeout_s: 120}}
executor:
  kind: slurm
  slurm: {{time: "00:05:00", bind_host: 127.0.0.1, poll_interval_s: 0.5}}
workloads:
  canary: {{modes: [fresh], probes_per_mode: 1, reference: stock-off}}
matrix:
  cohorts:
    - {{name: stock-off, build: stock, speculative: "off"}}
    - {{name: stock-ngram, build: stock, speculative: ngram}}
"""
    )
    return path


def specqual(*args: str, **kwargs: object) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"}
    return subprocess.Popen(
        [sys.executable, "-m", "eval.cli", *args],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        **kwargs,  # type: ignore[call-overload]
    )


def read_until(proc: subprocess.Popen[str], prefix: str, timeout_s: float = 120) -> tuple[str, list[str]]:
    """Lines of the process's output up to the first that starts with `prefix` (its rest, and all lines)."""
    assert proc.stdout is not None
    lines: list[str] = []
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line and proc.poll() is not None:
            break
        lines.append(line.rstrip("\n"))
        if line.startswith(prefix):
            return line[len(prefix) :].strip(), lines
    raise AssertionError(f"no {prefix!r} line; output:\n" + "\n".join(lines))


def test_serve_runs_the_stack_as_a_slurm_job(cohort_file: Path, tmp_path: Path, slurm_cluster: None) -> None:
    run_dir = tmp_path / "run"
    proc = specqual("serve", str(cohort_file), "--cohort", "stock-off", "--run-dir", str(run_dir))
    try:
        base_url, lines = read_until(proc, "base_url:")
        logs, _ = read_until(proc, "logs:")
        assert httpx.get(base_url + "/v1/models", trust_env=False).json()["data"][0]["id"] == "m"
        jobs = jobs_of(run_dir / "stock-off", "stack")
        assert len(jobs) == 1 and jobs[0].state != "CANCELLED"
        job_id = jobs[0].job_id
        assert [j.state for j in cluster.show_jobs(job_id)] == ["RUNNING"]
        commands = [ln for ln in lines if ln.startswith("command:")]
        assert len(commands) == 1 and "# on " in commands[0]  # the node the job runs on
        assert logs.startswith(str(run_dir / "stock-off" / "logs"))
    finally:
        proc.send_signal(signal.SIGTERM)
        out = proc.communicate(timeout=60)[0]
    assert proc.returncode == 0 and "stopped" in out
    assert [j.state for j in cluster.show_jobs(job_id)] == ["CANCELLED"]
    assert read_json(run_dir / "stock-off" / "stack.json")["slurm"]["job_id"] == job_id


def test_probe_runs_each_stack_as_a_slurm_job(cohort_file: Path, tmp_path: Path, slurm_cluster: None) -> None:
    proc = specqual("probe", str(cohort_file), "--results", str(tmp_path), "--run-id", "r")
    out = proc.communicate(timeout=300)[0]
    assert proc.returncode == 0, out
    for cohort in ("stock-off", "stock-ngram"):
        cdir = tmp_path / "r" / cohort
        jobs = jobs_of(cdir, "stack")
        assert len(jobs) == 1 and jobs[0].state == "CANCELLED", (cohort, jobs)
        assert read_json(cdir / "stack.json")["slurm"]["job_id"] == jobs[0].job_id
        assert list((cdir / "probes").glob("*.json")), f"{cohort}: no probe records"


def test_run_runs_each_stack_as_a_slurm_job(cohort_file: Path, tmp_path: Path, slurm_cluster: None) -> None:
    proc = specqual("run", str(cohort_file), "--results", str(tmp_path), "--run-id", "r")
    out = proc.communicate(timeout=300)[0]
    assert (tmp_path / "r" / "report.md").is_file(), out  # the stub server answers no probe: the report says so
    for cohort in ("stock-off", "stock-ngram"):
        jobs = jobs_of(tmp_path / "r" / cohort, "stack")
        assert len(jobs) == 1 and jobs[0].state == "CANCELLED", (cohort, jobs)
