"""Progress of rollouts: on a terminal, a live view (rich) with one row per cohort (done/total, infra errors,
corrupted units so far, turns, throughput, ETA); elsewhere (a log, CI) a progress line per running cohort at least
every 30 s (`eval.progress`)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from types import TracebackType

from rich.console import Console
from rich.live import Live
from rich.table import Table

from eval.progress import Heartbeat, clock, eta, line


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

    def unit_finished(self, infra_error: bool) -> None:
        self.running -= 1
        self.done += 1
        if infra_error:
            self.infra_errors += 1

    def mark_corrupted(self) -> None:
        self.corrupted += 1

    def rates(self) -> tuple[float, float, float | None]:
        """(units per minute, turns per second, ETA in seconds) over this session's work."""
        elapsed = max(time.monotonic() - self.started, 1e-6)
        finished_now = self.done - self.skipped
        per_min = finished_now / elapsed * 60
        return per_min, self.turns / elapsed, eta(finished_now, self.total - self.done, elapsed)

    def line(self) -> str:
        eta_s = self.rates()[2]
        elapsed = time.monotonic() - self.started
        return line("swebench", self.cohort, self.done, self.total, self.infra_errors, elapsed, eta_s)


class RolloutProgress:
    """`with RolloutProgress() as view: c = view.cohort("patched-off", total=1500, done=12)`.

    `enabled`: the live view (default: when the console is a terminal); without it, progress lines.
    """

    def __init__(self, console: Console | None = None, enabled: bool | None = None) -> None:
        self.console = console or Console(stderr=True)
        self.enabled = self.console.is_terminal if enabled is None else enabled
        self.cohorts: list[CohortProgress] = []
        self._live: Live | None = None
        self._heartbeat: Heartbeat | None = None

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
            per_min, turns_s, eta_s = c.rates()
            table.add_row(
                c.cohort,
                f"{c.done}/{c.total}",
                str(c.running),
                str(c.infra_errors),
                str(c.corrupted),
                str(c.turns),
                f"{per_min:.1f}",
                f"{turns_s:.2f}",
                clock(eta_s),
            )
        return table

    def lines(self) -> list[str]:
        """A progress line per cohort that has work left in this session (all of them at the end)."""
        return [c.line() for c in list(self.cohorts) if c.done < c.total or self._heartbeat is None]

    def __enter__(self) -> RolloutProgress:
        if self.enabled:
            self._live = Live(get_renderable=self.table, console=self.console, refresh_per_second=2)
            self._live.start()
        else:
            self._heartbeat = Heartbeat(self.console, self.lines).__enter__()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None
        if self._heartbeat is not None:
            beat, self._heartbeat = self._heartbeat, None
            beat.__exit__(exc_type, exc, tb)
