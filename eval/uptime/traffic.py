"""Send a soak plan to a running stack: `concurrency` requests in flight, aborted streams dropped mid-reply, and
hooks that start the during-load phases once a share of the plan has finished (the load keeps running).

Transport and HTTP errors are counted, never raised: a soak reports what the server did under load.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

import httpx

from eval.uptime.plan import SoakRequest

Hook = Callable[[int], Coroutine[Any, Any, None]]  # called with the number of finished soak requests


@dataclass
class SoakCounts:
    """What the soak sent and what came back (`uptime.json` -> soak)."""

    planned: int = 0
    sent: int = 0
    completed: int = 0
    aborted: int = 0
    errors: int = 0
    prompt_tokens: int = 0
    cached_tokens: int = 0
    output_tokens: int = 0
    wall_s: float = 0.0
    error_samples: list[str] = field(default_factory=list)

    @property
    def finished(self) -> int:
        return self.completed + self.aborted + self.errors

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class SoakClient:
    """Chat requests of the soak, greedy, with the agent's tools."""

    def __init__(self, base_url: str, model: str, tools: list[dict[str, Any]], tool_choice: str, seed: int) -> None:
        self.model, self.tools, self.tool_choice, self.seed = model, tools, tool_choice, seed
        self.http = httpx.AsyncClient(base_url=base_url.rstrip("/"), timeout=600)

    async def aclose(self) -> None:
        await self.http.aclose()

    def body(self, req: SoakRequest) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": req.messages,
            "tools": self.tools,
            "tool_choice": self.tool_choice,
            "max_tokens": req.max_tokens,
            "temperature": 0.0,
            "seed": self.seed,
        }
        if req.long:
            body["ignore_eos"] = True  # a long reply runs to its budget: long rows, many draft steps
        if req.stream:
            body.update(stream=True, stream_options={"include_usage": True})
        return body

    async def send(self, req: SoakRequest, counts: SoakCounts) -> None:
        counts.sent += 1
        try:
            if req.stream:
                await self._stream(req, counts)
            else:
                resp = await self.http.post("/v1/chat/completions", json=self.body(req))
                if resp.status_code != 200:
                    raise ValueError(f"HTTP {resp.status_code}: {resp.text[:200]}")
                _usage(counts, resp.json().get("usage"))
                counts.completed += 1
        except (httpx.HTTPError, ValueError, KeyError) as e:
            counts.errors += 1
            if len(counts.error_samples) < 5:
                counts.error_samples.append(f"{type(e).__name__}: {e}"[:300])

    async def _stream(self, req: SoakRequest, counts: SoakCounts) -> None:
        chunks = 0
        async with self.http.stream("POST", "/v1/chat/completions", json=self.body(req)) as resp:
            if resp.status_code != 200:
                raise ValueError(f"HTTP {resp.status_code}: {(await resp.aread()).decode(errors='replace')[:200]}")
            async for line in resp.aiter_lines():
                if not line.startswith("data:") or line[5:].strip() == "[DONE]":
                    continue
                data = json.loads(line[5:])
                _usage(counts, data.get("usage"))
                chunks += 1
                if req.abort_after_chunks is not None and chunks >= req.abort_after_chunks:
                    counts.aborted += 1  # leaving the block closes the connection: vLLM aborts the request
                    return
        counts.completed += 1


def _usage(counts: SoakCounts, usage: dict[str, Any] | None) -> None:
    if not usage:
        return
    counts.prompt_tokens += int(usage.get("prompt_tokens") or 0)
    counts.output_tokens += int(usage.get("completion_tokens") or 0)
    counts.cached_tokens += int((usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0)


async def run_traffic(
    client: SoakClient,
    plan: list[SoakRequest],
    concurrency: int,
    duration_s: float | None = None,
    hooks: Mapping[float, Hook] | None = None,
) -> SoakCounts:
    """Send `plan` with `concurrency` in flight until it is done or `duration_s` passed. `hooks[f]` starts (as a
    task beside the load) once a share f of the plan has finished or f x `duration_s` has passed, whichever is
    first. Returns the counts after every hook finished."""
    counts = SoakCounts(planned=len(plan))
    queue: asyncio.Queue[SoakRequest] = asyncio.Queue()
    for req in plan:
        queue.put_nowait(req)
    t0 = time.monotonic()
    pending = dict(sorted((hooks or {}).items()))
    started: list[asyncio.Task[None]] = []

    def due(f: float) -> bool:
        by_time = duration_s is not None and time.monotonic() - t0 >= f * duration_s
        return by_time or counts.finished >= f * len(plan)

    def fire() -> None:
        for f in [f for f in pending if due(f)]:
            started.append(asyncio.create_task(pending.pop(f)(counts.finished)))

    async def worker() -> None:
        while not queue.empty():
            if duration_s is not None and time.monotonic() - t0 >= duration_s:
                return
            await client.send(queue.get_nowait(), counts)
            fire()

    fire()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    for f in list(pending):  # the load ended before these thresholds: run them now, after it
        started.append(asyncio.create_task(pending.pop(f)(counts.finished)))
    counts.wall_s = round(time.monotonic() - t0, 2)
    await asyncio.gather(*started)
    return counts
