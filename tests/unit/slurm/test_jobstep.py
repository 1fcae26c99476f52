"""The in-job launcher: placeholders, waiting for peers' endpoint files, the endpoint record, exec."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from eval.executors.slurm import jobstep
from store.record_io import read_record, write_record
from store.stack_records import Endpoint


def test_mapping_waits_for_the_peers_it_names(tmp_path: Path) -> None:
    write_record(
        tmp_path / "prefill.0.json", jobstep.record("prefill.0", "0.0.0.0", 9001, ["vllm"], tmp_path / "p.log")
    )
    published = jobstep.wait_for({"prefill.0"}, tmp_path)["prefill.0"]
    argv = ["vllm-router", "--prefill", "{url.prefill.0}", "--port", "{port.router.0}", "--host", "{host}"]
    mapping = jobstep.mapping_for(argv, "router.0", "/py", "0.0.0.0", 8000, tmp_path)
    rendered = jobstep.render(argv, mapping)
    assert rendered == ["vllm-router", "--prefill", published.url, "--port", "8000", "--host", "0.0.0.0"]
    assert published.url == f"http://{jobstep.advertised_host('0.0.0.0')}:9001"
    assert mapping["url.router.0"].endswith(":8000") and "0.0.0.0" not in mapping["url.router.0"]


def test_advertised_host() -> None:
    assert jobstep.advertised_host("127.0.0.1") == "127.0.0.1"
    assert jobstep.advertised_host("0.0.0.0") == jobstep.socket.gethostname()


def test_publishes_its_endpoint_then_becomes_the_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = {**os.environ, "SLURM_JOB_ID": "77", "SLURMD_NODENAME": "n9"}
    script = "import sys, os; print('child', os.getpid(), sys.argv[1:])"
    argv = [sys.executable, "-m", "eval.executors.slurm.jobstep", "--endpoints", str(tmp_path), "--key", "server.0"]
    argv += ["--bind", "127.0.0.1", "--log", str(tmp_path / "s.log"), "--", "{python}", "-c", script, "{port.server.0}"]
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    rec = read_record(tmp_path / "77" / "server.0.json", Endpoint)
    assert rec is not None and rec.node == "n9" and rec.job_id == "77" and rec.url == f"http://127.0.0.1:{rec.port}"
    for _ in range(50):
        log = (tmp_path / "s.log").read_text()
        if log:
            break
        time.sleep(0.1)
    assert f"child {rec.pid} ['{rec.port}']" in log  # the same process, exec'd, with the port filled in
