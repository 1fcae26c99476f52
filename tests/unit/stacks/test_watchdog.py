"""The stack's watchdog against a real server process (the stub vLLM server of conftest.py) that is killed with
SIGKILL again and again: each death is seen within 10 s and the server comes back on the same URL, until
`server.max_restarts`; then the watchdog gives up, records why, and the report makes the cohort INCONCLUSIVE.
A server that is alive but stops answering (SIGSTOP) is restarted too."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import httpx

from eval.spec.load import load_spec
from eval.stacks import ensure_build, launch
from eval.stacks.process import ManagedProcess, processes_with_env
from eval.stacks.resources import free_ports
from eval.stacks.watchdog import EVENTS_FILE, Watchdog, answers
from eval.store.run import open_run


def read_events(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []


def wait_for_event(path: Path, event: str, count: int, timeout_s: float) -> dict:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found = [e for e in read_events(path) if e["event"] == event]
        if len(found) >= count:
            return found[count - 1]
        time.sleep(0.05)
    raise AssertionError(f"no {event} #{count} within {timeout_s} s: {read_events(path)}")


def kill_and_time(stack, events: Path, n: int) -> float:
    """SIGKILL the server's whole group; seconds until the watchdog records death number `n`."""
    os.killpg(stack.procs[0].pid, signal.SIGKILL)
    killed = datetime.now().astimezone()
    died = wait_for_event(events, "died", n, 30)
    assert died["exit_code"] == -signal.SIGKILL and died["process"] == "server.0"
    return (datetime.fromisoformat(died["time"]) - killed).total_seconds()


def test_server_killed_again_and_again_is_restarted_then_given_up(
    tmp_path: Path, fake_env: Path, cohort_yaml: Callable[..., Path]
) -> None:
    loaded = load_spec([str(cohort_yaml(tmp_path, fake_env)), "server.max_restarts=2"])
    run = open_run(loaded, tmp_path / "results", "dying")
    run.write_cohort(loaded, loaded.cohort("stock-off"), [])
    build = ensure_build(loaded.spec, "stock", cache=tmp_path / "cache")
    events = run.cohort_dir("stock-off") / EVENTS_FILE
    with launch(
        loaded.spec, loaded.cohort("stock-off"), "/models/none", run.path, build, startup_timeout_s=60
    ) as stack:
        url, marker = stack.base_url, stack.marker
        for n in (1, 2):
            old = stack.procs[0].pid
            assert kill_and_time(stack, events, n) < 10
            restarted = wait_for_event(events, "restarted", n, 60)
            assert restarted["restarts"] == n and stack.procs[0].pid != old and stack.alive()
            assert httpx.get(url + "/v1/models").status_code == 200  # same command, same port
        assert kill_and_time(stack, events, 3) < 10
        gave_up = wait_for_event(events, "gave_up", 1, 30)
        assert gave_up["deaths"] == 3 and gave_up["restarts"] == 2 and "specqual" in gave_up["log_tail"]
        time.sleep(0.5)
        assert not stack.alive() and processes_with_env(marker) == []
    assert [e["event"] for e in read_events(events)] == ["died", "restarted"] * 2 + ["died", "gave_up"]
    log = (run.cohort_dir("stock-off") / "logs" / "server.0.log").read_text()
    assert log.count("=== specqual") == 3  # the first start and two restarts, appended to one log

    report = subprocess.run([sys.executable, "-m", "analysis", "report", str(run.path)], capture_output=True, text=True)
    assert report.returncode == 0, report.stderr
    line = next(x for x in report.stdout.splitlines() if "stock-off" in x)
    assert line.startswith("INCONCLUSIVE") and "server died 3 times (restarted 2, max_restarts 2)" in line


HEALTH_SERVER = r"""
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer
class H(BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200 if self.path in ("/health", "/v1/models") else 404); self.end_headers()
    def log_message(self, *a): pass
HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
"""


def test_a_hung_server_is_restarted(tmp_path: Path) -> None:
    """Alive but not answering /health (SIGSTOP) for `unhealthy_polls` polls in a row: dead, restarted."""
    port = free_ports(1, "127.0.0.1")[0]
    argv = [sys.executable, "-c", HEALTH_SERVER, str(port)]
    proc = ManagedProcess("server", 0, argv, dict(os.environ), {}, tmp_path / "server.log", port)
    proc.start()
    url = f"http://127.0.0.1:{port}"
    events = tmp_path / EVENTS_FILE
    dog = Watchdog([proc], lambda p: url, events, stack_id="hung", max_restarts=1, startup_timeout_s=30, poll_s=0.5,
                   health_timeout_s=1.0)  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        with httpx.Client(timeout=5) as client:
            while time.monotonic() < deadline and not answers(client, url + "/health"):
                time.sleep(0.1)
        dog.start()
        hung = proc.pid
        assert hung is not None
        os.kill(hung, signal.SIGSTOP)
        died = wait_for_event(events, "died", 1, 30)
        assert died["exit_code"] is None  # alive, but unresponsive
        wait_for_event(events, "restarted", 1, 60)
        assert proc.pid != hung and httpx.get(url + "/health").status_code == 200
    finally:
        dog.stop()
        proc.stop()
