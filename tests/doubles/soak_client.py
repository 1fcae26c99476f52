"""Test double of the soak's HTTP client (eval.uptime.traffic.SoakClient): answers every request after a short
sleep, counts it like the real client, and remembers what was sent and when, so the scheduler can be tested
without a server."""

from __future__ import annotations

import asyncio
import time
from typing import Any


class ScriptedSoakClient:
    def __init__(self, delay_s: float = 0.001) -> None:
        self.delay_s = delay_s
        self.sent: list[tuple[float, int]] = []  # (monotonic time, plan index)
        self.in_flight = 0
        self.max_in_flight = 0

    async def send(self, req: Any, counts: Any) -> None:
        counts.sent += 1
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        self.sent.append((time.monotonic(), req.index))
        await asyncio.sleep(self.delay_s)
        self.in_flight -= 1
        if req.abort_after_chunks is not None:
            counts.aborted += 1
        else:
            counts.completed += 1
