"""Secrets given in a cohort file, an override or the environment never reach run.json, cohort.json or a plan."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from eval.cli import app
from eval.pipeline import write_cohorts
from eval.secrets import is_secret_name, redact_argv
from eval.spec import load_spec
from eval.store.run import open_run

SECRETS = ("hf_SECRET_in_file", "sk-SECRET-override", "sk-SECRET-arg")


def _loaded(write_spec):
    def edit(d):
        d["server"] = {"env": {"HF_TOKEN": SECRETS[0], "VLLM_LOGGING_LEVEL": "INFO"}, "args": {"api_key": SECRETS[2]}}

    path = str(write_spec(edit))
    return load_spec([path, f"server.env.OPENAI_API_KEY={SECRETS[1]}"])


def test_run_directory_holds_no_secret(write_spec, tmp_path: Path) -> None:
    loaded = _loaded(write_spec)
    run = open_run(loaded, tmp_path, "r1")
    write_cohorts(loaded, run, "/models/m")
    text = "".join(p.read_text() for p in (tmp_path / "r1").rglob("*.json"))
    for secret in SECRETS:
        assert secret not in text
    cohort = json.loads((tmp_path / "r1" / "patched-mtp5" / "cohort.json").read_text())
    assert "--api-key" in cohort["commands"][0] and "<redacted>" in cohort["commands"][0]
    assert cohort["env"]["VLLM_LOGGING_LEVEL"] == "INFO"  # ordinary settings stay visible


def test_plan_output_holds_no_secret(write_spec) -> None:
    loaded = _loaded(write_spec)
    result = CliRunner().invoke(app, ["plan", *loaded.sources, "--json"])
    assert result.exit_code == 0, result.output
    for secret in SECRETS:
        assert secret not in result.output
    assert "HF_TOKEN=" in result.output


def test_argv_forms() -> None:
    assert redact_argv(["--api-key", "x", "--port", "1"]) == ["--api-key", "<redacted>", "--port", "1"]
    assert redact_argv(["--hf-token=abc"]) == ["--hf-token=<redacted>"]
    ordinary = ["--enable-prompt-tokens-details", "--gpu-memory-utilization", "0.2", "--max-num-batched-tokens", "8"]
    assert redact_argv(ordinary) == ordinary
    assert redact_argv(["--api-key", "--port", "1"]) == ["--api-key", "--port", "1"]


def test_secret_names() -> None:
    for name in ("HF_TOKEN", "OPENAI_API_KEY", "AWS_SECRET_ACCESS_KEY", "api-key", "GITHUB_TOKEN", "db_password"):
        assert is_secret_name(name), name
    for name in ("max_num_batched_tokens", "enable_prompt_tokens_details", "max_tokens", "AUTHOR", "VLLM_USE_V1"):
        assert not is_secret_name(name), name


def test_flags_named_like_tokens_keep_their_values(write_spec, tmp_path: Path) -> None:
    """`return_token_ids: true` is not a credential: run.json must validate again when re-read."""
    loaded = load_spec([str(write_spec()), "workloads.swebench.agent.return_token_ids=true"])
    run = open_run(loaded, tmp_path, "r1")
    assert run.meta()["spec"]["workloads"]["swebench"]["agent"]["return_token_ids"] is True
