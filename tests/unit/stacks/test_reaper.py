"""A driver killed with SIGKILL takes its servers with it: each server's reaper sees the driver's pipe close and
kills the server's process group. The stack is started from a worker thread that has ended by the time the
driver is killed (PR_SET_PDEATHSIG would have fired then, or never for a process-wide death)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from eval.stacks.process import group_members, processes_with_env

REPO = Path(__file__).resolve().parents[3]

DRIVER = r"""
import sys, threading, time
from pathlib import Path
from eval.spec.load import load_spec
from eval.stacks import ensure_build, launch

loaded = load_spec([sys.argv[1]])
spec = loaded.spec
build = ensure_build(spec, "stock", cache=Path(sys.argv[2]))

def start():
    stack = launch(spec, loaded.cohort("stock-off"), "/models/none", None, build, startup_timeout_s=60)
    stack.__enter__()
    print(stack.marker, stack.procs[0].pid, flush=True)

worker = threading.Thread(target=start)
worker.start()
worker.join()
time.sleep(600)
"""


def test_servers_die_with_a_sigkilled_driver(tmp_path: Path, fake_env: Path, cohort_yaml: Callable[..., Path]):
    cohort = cohort_yaml(tmp_path, fake_env)
    argv = [sys.executable, "-c", DRIVER, str(cohort), str(tmp_path / "cache")]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    driver = subprocess.Popen(argv, cwd=REPO, env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert driver.stdout is not None
        marker, pgid = driver.stdout.readline().split()
        time.sleep(1.0)  # the thread that started the stack has ended: the server must still run
        assert len(processes_with_env(marker)) == 2 and group_members(int(pgid))
        os.kill(driver.pid, signal.SIGKILL)
        driver.wait(10)
        killed = time.monotonic()
        # Both: a process on its way out may no longer show its environment while it is still in the group.
        while (processes_with_env(marker) or group_members(int(pgid))) and time.monotonic() - killed < 15:
            time.sleep(0.1)
        gone_s = time.monotonic() - killed
        assert processes_with_env(marker) == [] and group_members(int(pgid)) == []
        assert gone_s < 10, f"the server group outlived its driver by {gone_s:.1f} s"
    finally:
        if driver.poll() is None:
            driver.kill()
