"""Progress where there is no terminal: `specqual rollout` with its output sent to a file (as CI and `nohup` do)
prints a plain progress line per running cohort while it runs, not only at the end."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from eval.spec.load import load_spec
from eval.tasks.load import load_tasks
from tests.doubles.scripted_model import ScriptedModelServer, solver

REPO = Path(__file__).resolve().parents[3]
COHORT_FILE = """\
name: progress-log
model: {path: /models/scripted, served_name: scripted, tool_call_parser: hermes}
builds: {local: {env: /opt/none}}
speculative: {off: {method: null}}
workloads:
  swebench:
    dataset: specqual/local
    path: tasks
    repeats: 2
    concurrency: 2
    agent: {kind: toolcall, max_turns: 5, request_retries: 0}
    sandbox: {kind: bwrap, memory_gb: 4}
"""
LINE = re.compile(r"^progress swebench local: (\d+)/(\d+) done, (\d+) infra, elapsed \d+:\d\d:\d\d, ETA (\S+)$")


def test_a_log_gets_progress_lines_while_the_rollouts_run(tmp_path: Path, task_dir: Path) -> None:
    (tmp_path / "tasks").symlink_to(task_dir)
    cohort_file = tmp_path / "cohort.yaml"
    cohort_file.write_text(COHORT_FILE)
    loaded = load_spec([str(cohort_file)])
    assert loaded.spec.workloads.swebench is not None
    tasks = load_tasks(loaded.spec.workloads.swebench, loaded.spec.base_dir)
    log = tmp_path / "run.log"
    env = {**os.environ, "SPECQUAL_PROGRESS_EVERY_S": "0.1", "PYTHONPATH": str(REPO)}
    with ScriptedModelServer(solver(tasks), delay_s=0.3) as server, log.open("w") as out:
        argv = ["rollout", str(cohort_file), "--cohort", "local", "--base-url", server.base_url]
        argv += ["--results", str(tmp_path / "results")]
        proc = subprocess.run(
            [sys.executable, "-m", "eval.cli", *argv], cwd=REPO, env=env, stdout=out, stderr=out, timeout=300
        )
    text = log.read_text()
    assert proc.returncode == 0, text
    assert "\x1b[" not in text  # plain text, no terminal control sequences
    progress = [m for ln in text.splitlines() if (m := LINE.match(ln))]
    total = 2 * len(tasks)
    assert progress and all(int(m.group(2)) == total for m in progress), text
    assert progress[-1].group(1) == str(total) and progress[-1].group(4) == "0:00:00", text  # the final line
    during = [m for m in progress[:-1] if int(m.group(1)) < total]
    assert len(during) >= 2, f"no progress lines while running:\n{text}"  # each request waits 0.3 s: >= 1.2 s
    assert [int(m.group(1)) for m in progress] == sorted(int(m.group(1)) for m in progress)
