"""Build harness-shaped tasks (the fields swebench 5 reads) for tests that feed logs to the harness."""

from __future__ import annotations

import json
from pathlib import Path

from eval.protocols import Task
from eval.tasks.records import to_task

LOGS = Path(__file__).parent / "logs"


def harness_task(instance_id: str, repo: str, log_parser: str, f2p: list[str], p2p: list[str]) -> Task:
    record = {
        "instance_id": instance_id,
        "repo": repo,
        "base_commit": "0" * 40,
        "patch": "diff --git a/x b/x\n",
        "test_patch": "diff --git a/t b/t\n",
        "problem_statement": "",
        "version": "1.0",
        "FAIL_TO_PASS": json.dumps(f2p),
        "PASS_TO_PASS": json.dumps(p2p),
        "image": f"swebench/sweb.eval.x86_64.{instance_id}:latest",
        "log_parser": log_parser,
        "eval_type": "pass_and_fail",
        "eval_script": "#!/bin/bash\nset -uxo pipefail\n: '>>>>> Start Test Output'\ntrue\n: '>>>>> End Test Output'\n",
    }
    return to_task(record, "test", 0)


def log_text(name: str) -> str:
    return (LOGS / name).read_text(encoding="utf-8")
