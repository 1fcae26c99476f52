"""Keeps a running local stack up: a server process that dies mid-run is restarted with the same command and port.

A thread polls every `poll_s` (2 s): a process that has exited, or whose /health has failed `unhealthy_polls`
times in a row, is dead. Its group's leftovers (vLLM's engine core) are stopped, it is started again with the
same argv, environment and port (its log is appended to), and the watchdog waits until it answers /health and
/v1/models. After `max_restarts` restarts the next death is final: the watchdog gives up and the stack stays
down (the rollout scheduler then stops waiting for it, and the report makes the cohort INCONCLUSIVE).

Every step is appended to `<cohort dir>/server_events.jsonl` (one JSON object a line, `schema_version` 1):
`time`, `stack_id`, `event` (`died`, `restarted`, `gave_up`), `process`, `exit_code` (null when the process was
alive but unresponsive), `deaths`, `restarts`, `max_restarts`, `log_tail` (died, gave_up) and `ready_s` (restarted:
seconds from detection to ready). The analysis package reads this file; the scheduler watches it for `gave_up`.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import httpx

from eval.stacks.process import ManagedProcess
from store.atomic import append_line
from store.layout import SERVER_EVENTS
from store.stack_records import ServerEvent

EVENTS_FILE = SERVER_EVENTS
EventKind = Literal["died", "restarted", "gave_up"]


def event_time() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def answers(client: httpx.Client, url: str) -> bool:
    try:
        return client.get(url).status_code == 200
    except httpx.HTTPError:
        return False


class Watchdog:
    """See the module docstring. `start()` once the stack is ready; `stop()` before stopping its processes."""

    def __init__(
        self,
        procs: list[ManagedProcess],
        url_of: Callable[[ManagedProcess], str],
        events_path: Path,
        *,
        stack_id: str,
        max_restarts: int,
        startup_timeout_s: float,
        poll_s: float = 2.0,
        unhealthy_polls: int = 3,
        health_timeout_s: float = 10.0,
        on_restart: Callable[[], None] | None = None,
    ) -> None:
        self.procs = procs
        self.url_of = url_of
        self.events_path = events_path
        self.stack_id = stack_id
        self.max_restarts = max_restarts
        self.startup_timeout_s = startup_timeout_s
        self.poll_s = poll_s
        self.unhealthy_polls = unhealthy_polls
        self.health_timeout_s = health_timeout_s
        self.on_restart = on_restart
        self.deaths = 0
        self.restarts = 0
        self.gave_up = False
        self.recovering = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="stack-watchdog", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    # ------------------------------------------------------------ the loop

    def _run(self) -> None:
        failures = {p.key: 0 for p in self.procs}
        with httpx.Client(timeout=self.health_timeout_s) as client:
            while not self._stop.wait(self.poll_s):
                for p in self.procs:
                    code = self._exit_code(p)
                    if code is None:
                        healthy = answers(client, self.url_of(p) + "/health")
                        failures[p.key] = 0 if healthy else failures[p.key] + 1
                        if failures[p.key] < self.unhealthy_polls:
                            continue
                    failures[p.key] = 0
                    if not self._recover(p, code, client):
                        return

    @staticmethod
    def _exit_code(p: ManagedProcess) -> int | None:
        """None while running, or when asking failed (a docker engine restarting): then /health decides. An
        exception here must not end the thread: the stack would go unwatched for the rest of the run."""
        try:
            return p.exit_code()
        except Exception:
            return None

    def _start(self, p: ManagedProcess) -> str | None:
        """Start `p` again; the error when it could not be started (it then counts as another death)."""
        try:
            p.start()
        except Exception as e:
            return f"{type(e).__name__}: {e}"
        return None

    def _recover(self, p: ManagedProcess, code: int | None, client: httpx.Client) -> bool:
        """Restart `p` until it is ready; False once the watchdog gives up (or is stopped)."""
        self.recovering = True
        try:
            error: str | None = None
            while not self._stop.is_set():
                self.deaths += 1
                tail = error or self._log_tail(p)
                self._event("died", p, exit_code=code, log_tail=tail)
                self._stop_leftovers(p)
                if self._stop.is_set():  # the stack is being stopped: nothing to restart for
                    return False
                if self.restarts >= self.max_restarts:
                    self.gave_up = True
                    self._event("gave_up", p, exit_code=code, log_tail=tail)
                    return False
                self.restarts += 1
                detected = time.monotonic()
                error = self._start(p)
                code = -1 if error else self._wait_ready(p, client)
                if code is None and not self._stop.is_set():
                    self._event("restarted", p, ready_s=round(time.monotonic() - detected, 2))
                    if self.on_restart is not None:
                        with contextlib.suppress(Exception):  # provenance left stale; the watching goes on
                            self.on_restart()
                    return True
            return False
        finally:
            self.recovering = False

    @staticmethod
    def _log_tail(p: ManagedProcess) -> str:
        try:
            return p.log_tail(20)
        except Exception as e:  # a container's log is read through the engine
            return f"(log not readable: {type(e).__name__}: {e})"

    @staticmethod
    def _stop_leftovers(p: ManagedProcess) -> None:
        """What is left of the dead process (vLLM's engine core, a stopped container); best effort."""
        with contextlib.suppress(Exception):
            p.stop(term_timeout_s=10.0)

    def _wait_ready(self, p: ManagedProcess, client: httpx.Client) -> int | None:
        """None once `p` answers /health and /v1/models; its exit code if it dies (-1: not ready in time)."""
        deadline = time.monotonic() + self.startup_timeout_s
        url = self.url_of(p)
        while not self._stop.is_set():
            code = self._exit_code(p)
            if code is not None:
                return code
            if answers(client, url + "/health") and answers(client, url + "/v1/models"):
                return None
            if time.monotonic() > deadline:
                return -1
            self._stop.wait(1.0)
        return None

    def _event(self, event: EventKind, p: ManagedProcess, **fields: Any) -> None:
        record = ServerEvent(
            time=event_time(),
            stack_id=self.stack_id,
            event=event,
            process=p.key,
            deaths=self.deaths,
            restarts=self.restarts,
            max_restarts=self.max_restarts,
            **fields,
        )
        append_line(self.events_path, record.model_dump(mode="json"))  # one writer: this thread
