"""A cohort's server deaths and restarts, from `<cohort>/server_events.jsonl` (written by the stack's watchdog).

A server that died and came back cost only infra retries (the units in flight were run again); a server the
watchdog gave up on means the cohort's sample was cut by the infrastructure: the verdict is INCONCLUSIVE with the
reason, never a low score.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from store.layout import SERVER_EVENTS
from store.record_io import read_records
from store.stack_records import ServerEvent

EVENTS_FILE = SERVER_EVENTS


@dataclass
class ServerHealth:
    deaths: int
    restarts: int
    gave_up: bool
    max_restarts: int | None
    last_log: str | None  # the last non-empty line of the dead server's log, when it gave up

    def reason(self) -> str:
        log = f"; last log: {self.last_log}" if self.last_log else ""
        return (
            f"server died {self.deaths} times (restarted {self.restarts}, max_restarts {self.max_restarts}); "
            f"gave up restarting{log}"
        )


def last_line(tail: object, limit: int = 200) -> str | None:
    lines = [x.strip() for x in str(tail or "").splitlines() if x.strip()]
    return lines[-1][:limit] if lines else None


def server_health(cohort_dir: Path) -> ServerHealth | None:
    """Counts over every launch of the cohort's stack; None when no server died (or nothing was recorded)."""
    events = read_records(cohort_dir / EVENTS_FILE, ServerEvent)
    if not events:
        return None
    gave_up = [e for e in events if e.event == "gave_up"]
    last = gave_up[-1] if gave_up else None
    return ServerHealth(
        deaths=sum(e.event == "died" for e in events),
        restarts=sum(e.event == "restarted" for e in events),
        gave_up=last is not None,
        max_restarts=last.max_restarts if last else events[-1].max_restarts,
        last_log=last_line(last.log_tail) if last else None,
    )
