"""A live progress view of rollouts (rich): one row per cohort with done/total, infra errors, corrupted units
so far, turns, throughput and ETA. Off when stderr is not a terminal (logs and CI stay clean)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

from rich.console import Console
from rich.live import Live
from rich.table import Table


@dataclass
class CohortProgress:
    """Counters of one cohort's rollout; updated by the scheduler (and by graders/classifiers, for corrupted)."""

    cohort: str
    total: int
    done: int = 0
    skipped: int = 0
    infra_errors: int = 0
    corrupted: int = 0
    turns: int = 0
    running: int = 0
    started: float = field(default_factory=time.monotonic)

    def turn(self) -> None:
        self.turns += 1

    def unit_started(self) -> None:
        self.running += 1

    def unit_finished(self, verdict: dict[str, Any]) -> None:
        self.running -= 1
        self.done += 1
        if verdict.get("status") == "infra_error":
            self.infra_errors += 1

    def mark_corrupted(self) -> None:
        self.corrupted += 1

    def rates(self) -> tuple[float, float, float | None]:
        """(units per minute, turns per second, ETA in seconds) over this session's work."""
        elapsed = max(time.monotonic() - self.started, 1e-6)
        finished_now = self.done - self.skipped
        per_min = finished_now / elapsed * 60
        eta = (self.total - self.done) / (finished_now / elapsed) if finished_now else None
        return per_min, self.turns / elapsed, eta


def _eta(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}"


class RolloutProgress:
    """`with RolloutProgress() as view: c = view.cohort("patched-off", total=1500, done=12)`."""

    def __init__(self, console: Console | None = None, enabled: bool | None = None) -> None:
        self.console = console or Console(stderr=True)
        self.enabled = self.console.is_terminal if enabled is None else enabled
        self.cohorts: list[CohortProgress] = []
        self._live: Live | None = None

    def cohort(self, name: str, total: int, done: int = 0) -> CohortProgress:
        row = CohortProgress(name, total, done=done, skipped=done)
        self.cohorts.append(row)
        return row

    def table(self) -> Table:
        table = Table(title="SWE-bench rollouts", expand=False)
        for header in ("cohort", "done/total", "running", "infra", "corrupted", "turns", "units/min", "turns/s"):
            table.add_column(header, justify="left" if header == "cohort" else "right")
        table.add_column("ETA", justify="right")
        for c in self.cohorts:
            per_min, turns_s, eta = c.rates()
            table.add_row(
                c.cohort,
                f"{c.done}/{c.total}",
                str(c.running),
                str(c.infra_errors),
                str(c.corrupted),
                str(c.turns),
                f"{per_min:.1f}",
                f"{turns_s:.2f}",
                _eta(eta),
            )
        return table

    def __enter__(self) -> RolloutProgress:
        if self.enabled:
            self._live = Live(get_renderable=self.table, console=self.console, refresh_per_second=2)
            self._live.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None
