"""Secrets reach the server process and nothing else: a stack launched with a token in the cohort file's server
environment, an API key as a server argument and a key in the driver's own environment, then stopped and
reported on, leaves none of them in any file of the run directory (logs, stack.json, cohort.json, report)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from eval.spec.load import load_spec
from eval.stacks import ensure_build, launch
from eval.store.run import open_run

SECRETS = {"file": "hf_SECRETfromfile123", "arg": "sk-SECRETarg456", "environ": "sk-SECRETenviron789"}


def test_a_launched_stack_writes_no_secret(
    tmp_path: Path, fake_env: Path, cohort_yaml: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRETS["environ"])
    overrides = [f"server.env.HF_TOKEN={SECRETS['file']}", f"server.args.api_key={SECRETS['arg']}"]
    loaded = load_spec([str(cohort_yaml(tmp_path, fake_env)), *overrides])
    run = open_run(loaded, tmp_path / "results", "secrets")
    run.write_cohort(loaded, loaded.cohort("stock-off"), [])
    build = ensure_build(loaded.spec, "stock", cache=tmp_path / "cache")
    with launch(
        loaded.spec, loaded.cohort("stock-off"), "/models/none", run.path, build, startup_timeout_s=60
    ) as stack:
        assert httpx.get(stack.base_url + "/v1/models").status_code == 200
        server = stack.procs[0]
        assert server.env["HF_TOKEN"] == SECRETS["file"] and SECRETS["arg"] in server.argv  # the server gets them
    report = subprocess.run([sys.executable, "-m", "analysis", "report", str(run.path)], capture_output=True)
    assert report.returncode == 0, report.stderr
    files = [p for p in run.path.rglob("*") if p.is_file()]
    assert any(p.name.endswith(".log") for p in files) and any(p.name == "stack.json" for p in files)
    for p in files:
        data = p.read_bytes()
        for where, secret in SECRETS.items():
            assert secret.encode() not in data, f"the secret from the {where} is in {p.relative_to(run.path)}"
    assert SECRETS["file"] not in report.stdout.decode() + report.stderr.decode()
