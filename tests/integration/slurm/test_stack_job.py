"""Stacks as Slurm jobs, with stand-in HTTP servers for vLLM (the real one: test_vllm_slurm.py): discovery
through the endpoint file, readiness, P/D with the toy proxy as router, fail-fast, scancel, provenance."""

from __future__ import annotations

import hashlib
import sys
from dataclasses import replace
from pathlib import Path

import httpx
import pytest

from eval.executors.slurm import cluster
from eval.executors.slurm.record import jobs_of
from eval.executors.slurm.scripts import StackJob
from eval.executors.slurm.stack import SlurmStack, SlurmStackError
from eval.spec.models import SlurmOptions
from eval.stacks.commands import ProcessCommand
from eval.store.atomic import read_json

pytestmark = pytest.mark.slurm
STANDIN = "tests.doubles.slurm_standin_server"


def standin(role: str, index: int, *extra: str) -> ProcessCommand:
    argv = ["{python}", "-m", STANDIN, "--host", "{host}", "--port", f"{{port.{role}.{index}}}", "--name"]
    return ProcessCommand(role, index, [*argv, f"{role}.{index}", *extra])


def job(tmp_path: Path, commands: list[ProcessCommand], bind: str = "127.0.0.1") -> StackJob:
    return StackJob(
        cohort="c",
        commands=commands,
        options=SlurmOptions(time="00:05:00"),
        cohort_dir=tmp_path / "c",
        python=sys.executable,
        specqual_python=sys.executable,
        device="cpu",
        bind=bind,
    )


def test_single_server_job_is_discovered_through_its_file(tmp_path: Path, job_env: None) -> None:
    stack = SlurmStack(job(tmp_path, [standin("server", 0)]), None, startup_timeout_s=60, poll_s=0.3)
    with stack:
        assert stack.base_url.startswith("http://127.0.0.1:")
        endpoint = read_json(tmp_path / "c" / "slurm" / "endpoints" / str(stack.job_id) / "server.0.json")
        assert endpoint["url"] == stack.base_url and endpoint["job_id"] == stack.job_id
        models = httpx.get(stack.base_url + "/v1/models", trust_env=False).json()
        assert models["data"][0]["id"] == "server.0"
        assert stack.alive()
        assert stack.metrics_urls == [stack.base_url + "/metrics"]
    assert not stack.alive()
    assert [j.state for j in cluster.show_jobs(str(stack.job_id))] == ["CANCELLED"]
    prov = read_json(tmp_path / "c" / "stack.json")
    assert prov["slurm"]["job_id"] == stack.job_id and prov["slurm"]["nodes"]
    assert prov["stopped_at"] is not None and prov["base_url"] == stack.base_url
    recorded = jobs_of(tmp_path / "c", "stack")
    assert [(j.job_id, j.state) for j in recorded] == [(stack.job_id, "CANCELLED")]


def test_wildcard_bind_advertises_the_node_name(tmp_path: Path, job_env: None) -> None:
    with SlurmStack(job(tmp_path, [standin("server", 0)], bind="0.0.0.0"), None, poll_s=0.3) as stack:
        host = stack.endpoints["server.0"].host
        assert host == stack.endpoints["server.0"].hostname and host != "0.0.0.0"
        assert httpx.get(stack.base_url + "/health", trust_env=False).status_code == 200


def test_pd_stack_routes_through_the_router(tmp_path: Path, job_env: None) -> None:
    router = ProcessCommand(
        "router",
        0,
        [
            *("{python}", "-m", "eval.stacks.toy_proxy", "--prefill", "{url.prefill.0}", "--decode", "{url.decode.0}"),
            *("--host", "{host}", "--port", "{port.router.0}"),
        ],
    )
    commands = [standin("prefill", 0), standin("decode", 0), router]
    with SlurmStack(job(tmp_path, commands), None, startup_timeout_s=60, poll_s=0.3) as stack:
        assert stack.base_url == stack.endpoints["router.0"].url
        assert len(stack.metrics_urls) == 2
        # The toy proxy forwards GETs to the decode worker.
        assert httpx.get(stack.base_url + "/v1/models", trust_env=False).json()["data"][0]["id"] == "decode.0"
        argv = stack.endpoints["router.0"].argv
        assert stack.endpoints["prefill.0"].url in argv and stack.endpoints["decode.0"].url in argv
    assert [j.state for j in cluster.show_jobs(str(stack.job_id))] == ["CANCELLED"]


def test_a_dying_server_fails_the_launch_with_its_log(tmp_path: Path, job_env: None) -> None:
    stack = SlurmStack(job(tmp_path, [standin("server", 0, "--fail")]), None, startup_timeout_s=120, poll_s=0.3)
    with pytest.raises(SlurmStackError, match=r"(?s)ended while starting: FAILED.*failing on purpose"), stack:
        pass


def test_secrets_reach_the_server_but_no_file(tmp_path: Path, job_env: None) -> None:
    """A token in the stack's environment and an API key as a server argument: the server gets both (through
    sbatch's environment), while the script, the endpoint files, the logs and stack.json hold neither."""
    token, key = "hf_SECRETslurmtoken1", "sk-SECRETslurmkey2"
    server = standin("server", 0, "--api-key", key)
    stack_job = replace(job(tmp_path, [server]), env={"HF_TOKEN": token, "VLLM_X": "1"})
    with SlurmStack(stack_job, None, startup_timeout_s=60, poll_s=0.3) as stack:
        got = httpx.get(stack.base_url + "/v1/models", trust_env=False).json()["data"][0]
        assert got["api_key_sha256"] == hashlib.sha256(key.encode()).hexdigest()
        assert got["hf_token_sha256"] == hashlib.sha256(token.encode()).hexdigest()
    files = [p for p in (tmp_path / "c").rglob("*") if p.is_file()]
    assert any(p.suffix == ".sbatch" for p in files) and any(p.parent.parent.name == "endpoints" for p in files)
    for p in files:
        data = p.read_bytes()
        assert token.encode() not in data and key.encode() not in data, f"a secret is in {p}"
