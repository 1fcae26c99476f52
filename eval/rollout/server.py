"""Waiting out a server restart: after an infra failure a unit waits until the server answers again before its
next attempt, instead of burning its retries while the stack's watchdog (eval.stacks.watchdog) restarts it.

One unit polls `{base_url}/health` at a time (the others queue behind it and then find the server up). Any HTTP
answer below 500 counts as up (an endpoint without /health answers 404). The wait ends early when the cohort's
`server_events.jsonl` gets a `gave_up` event after this rollout started, and is bounded by the server's start-up
timeout; either way the server is then *lost*: no unit waits again, and units not finished yet are written as
infra errors without further attempts (never unresolved; the report makes the cohort INCONCLUSIVE).
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import aiohttp

from store.record_io import parse_record
from store.stack_records import ServerEvent


class ServerGate:
    def __init__(self, base_url: str, timeout_s: float, events_path: Path | None = None, poll_s: float = 1.0):
        self.base_url = base_url.rstrip("/")
        self.timeout_s = timeout_s
        self.events_path = events_path
        self.poll_s = poll_s
        self.lost: str | None = None
        self._offset = events_path.stat().st_size if events_path is not None and events_path.exists() else 0
        self._lock = asyncio.Lock()

    async def wait_up(self) -> bool:
        """True once the server answers; False when it is lost (now or earlier)."""
        if self.lost is not None:
            return False
        async with self._lock, aiohttp.ClientSession() as session:
            deadline = time.monotonic() + self.timeout_s
            while self.lost is None:
                if await self._answers(session):
                    return True
                gave_up = self._gave_up()
                if gave_up is not None:
                    self.lost = gave_up
                elif time.monotonic() > deadline:
                    self.lost = f"server {self.base_url} did not answer /health for {self.timeout_s:.0f} s"
                else:
                    await asyncio.sleep(self.poll_s)
        return False

    async def _answers(self, session: aiohttp.ClientSession) -> bool:
        try:
            async with session.get(self.base_url + "/health", timeout=aiohttp.ClientTimeout(total=10)) as r:
                return r.status < 500
        except (aiohttp.ClientError, TimeoutError):
            return False

    def _gave_up(self) -> str | None:
        """The stack's `gave_up` event recorded since this rollout started, as a reason."""
        if self.events_path is None:
            return None
        try:
            with self.events_path.open("rb") as f:
                f.seek(self._offset)
                lines = f.read().decode("utf-8", "replace").splitlines()
        except OSError:
            return None
        for line in lines:
            try:
                event = parse_record(json.loads(line), ServerEvent)
            except ValueError:
                continue
            if event is not None and event.event == "gave_up":
                return f"the stack gave up restarting its server (died {event.deaths} times)"
        return None
