"""The soak plan: a bounded, seeded list of agent-like requests (what is sent, not how).

Sessions are the tool-calling agent's conversations on generated instances (the organism's own prompt, template
and tools, so that a drafter trained on them accepts drafts): turn 1 is the task (system + user), turn 2 adds the
`bash` call and its observation, so turn 2 is a prefix-cache hit on turn 1 and every request shares the system
prompt. Sessions repeat (an agent retrying the same instance: a full-prefix hit). A share of requests gets the
long token budget, a share of streaming requests is aborted after a few chunks. With a small KV pool
(`num_gpu_blocks_override`, `max_num_seqs` in the cohort file) the plan's prompts outgrow the cache within
minutes, so cached prefix blocks and Mamba state blocks are evicted and their rows and blocks reused.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from eval.models.organism.data import solved
from eval.spec.workloads import SoakWorkload

SOAK_INSTANCE_BASE = 0  # held-out instances the soak talks about
PROBE_INSTANCE_BASE = 500  # held-out instances the probes use (never in the soak: their prefixes stay their own)
TURNS = 2
UNBOUNDED = 1_000_000  # a plan sized by time alone has this many requests (the clock ends it)


@dataclass(frozen=True)
class SoakRequest:
    """One planned request: its session and turn, the chat, its budget, and whether it is aborted."""

    index: int
    session: int
    turn: int
    messages: list[dict[str, Any]]
    max_tokens: int
    long: bool
    stream: bool
    abort_after_chunks: int | None


def session_chat(instance: int, turn: int) -> list[dict[str, Any]]:
    """The agent's messages before its reply at `turn` (1: the task; 2: the task, its bash call, the output)."""
    trajectory = solved("heldout", instance)
    return trajectory[: 2 * turn]


def plan_size(cfg: SoakWorkload) -> int:
    return cfg.requests if cfg.requests is not None else UNBOUNDED


def build_plan(cfg: SoakWorkload, count: int | None = None) -> list[SoakRequest]:
    """The first `count` (default: the configured number of) requests of the seeded plan; the same seed and
    settings give the same plan."""
    rng = random.Random(f"soak-{cfg.seed}")
    out: list[SoakRequest] = []
    n = count if count is not None else min(plan_size(cfg), 10_000)
    turn_of = [1] * cfg.sessions
    for index in range(n):
        session = rng.randrange(cfg.sessions)
        turn = turn_of[session]
        turn_of[session] = turn % TURNS + 1  # 1, 2, 1, 2, ...: the session is retried after its second turn
        long = rng.random() < cfg.long_fraction
        stream = rng.random() < 0.5
        aborted = stream and rng.random() < cfg.abort_fraction
        out.append(
            SoakRequest(
                index=index,
                session=session,
                turn=turn,
                messages=session_chat(SOAK_INSTANCE_BASE + session, turn),
                max_tokens=cfg.long_max_tokens if long else cfg.short_max_tokens,
                long=long,
                stream=stream or aborted,
                abort_after_chunks=cfg.abort_after_chunks if aborted else None,
            )
        )
    return out
