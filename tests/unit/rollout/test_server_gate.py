"""Infra retries wait for the server: a unit whose server went away retries only once the server answers again,
and a server the stack gave up on (a `gave_up` event in server_events.jsonl) ends the waiting: the units left are
infra errors at once, never unresolved, never a long series of doomed attempts."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from eval.rollout.run import run_rollouts
from eval.rollout.server import ServerGate
from eval.stacks.resources import free_ports
from eval.store.run import open_run
from store.stack_records import ServerEvent


class Health(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200 if self.path == "/health" else 404)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def test_wait_returns_once_a_server_comes_up_on_the_port(tmp_path: Path):
    port = free_ports(1, "127.0.0.1")[0]
    gate = ServerGate(f"http://127.0.0.1:{port}", timeout_s=60, events_path=tmp_path / "server_events.jsonl")
    servers: list[ThreadingHTTPServer] = []

    def come_up() -> None:  # nothing listens until then: connection refused, as while a server restarts
        servers.append(ThreadingHTTPServer(("127.0.0.1", port), Health))
        servers[0].serve_forever()

    threading.Timer(1.5, come_up).start()
    try:
        started = time.monotonic()
        assert asyncio.run(gate.wait_up()) is True
        assert time.monotonic() - started >= 1.4 and gate.lost is None
    finally:
        servers[0].shutdown()
        servers[0].server_close()


def gave_up_event(deaths: int) -> dict[str, object]:
    """A `gave_up` line as the stack's watchdog writes it."""
    event = ServerEvent(time="2026-12-05T00:00:00.000+00:00", stack_id="s", event="gave_up", process="server.0",
                        deaths=deaths, restarts=deaths - 1, max_restarts=deaths - 1, exit_code=-9)  # fmt: skip
    return event.model_dump(mode="json")


def test_a_stack_that_gave_up_ends_the_wait_and_the_run(loaded, tasks, tmp_path: Path):
    run = open_run(loaded, tmp_path / "results", "lost")
    events = run.cohort_dir("local") / "server_events.jsonl"
    events.parent.mkdir(parents=True, exist_ok=True)
    old = gave_up_event(deaths=9)  # an earlier launch's: must not count
    events.write_text(json.dumps(old) + "\n")
    dead = f"http://127.0.0.1:{free_ports(1, '127.0.0.1')[0]}"  # nothing listens: connection refused

    def give_up() -> None:
        with events.open("a") as f:
            f.write(json.dumps(gave_up_event(deaths=4)) + "\n")

    threading.Timer(2.0, give_up).start()
    started = time.monotonic()
    summary = asyncio.run(run_rollouts(loaded, run, "local", dead, tasks))
    assert time.monotonic() - started < 60  # not the start-up timeout (1800 s) per unit
    assert summary.server_lost == "the stack gave up restarting its server (died 4 times)"
    assert (summary.completed, summary.infra_errors) == (0, 12)
    verdicts = [json.loads(p.read_text()) for p in run.cohort_dir("local").glob("units/*/r*/verdict.json")]
    assert len(verdicts) == 12 and {v["status"] for v in verdicts} == {"infra_error"}
    assert all("server lost: the stack gave up" in v["infra_reason"] for v in verdicts)
    # the units in flight tried once, the others not at all: no attempt after the server was lost
    assert {v["attempts"] for v in verdicts} <= {0, 1} and sum(v["attempts"] for v in verdicts) == 3
