"""The canary's progress: on a terminal, one live line per cohort (state, probes done) via rich; elsewhere (a log,
CI) a progress line per cohort being probed at least every 30 s (`eval.progress`): done/total, infra, elapsed,
ETA."""

from __future__ import annotations

import time
from dataclasses import dataclass
from types import TracebackType

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from eval.progress import Heartbeat, eta, line


@dataclass
class _Cohort:
    total: int
    state: str = "waiting"
    done: int = 0
    resumed: int = 0  # probes found on disk: not part of this session's rate
    infra: int = 0
    started: float | None = None


class CanaryProgress:
    """`with CanaryProgress(console, cohorts, probes_per_cohort) as p: p.status(c, "probing"); p.advance(c)`."""

    def __init__(self, console: Console, cohorts: list[str], probes: int) -> None:
        self.live = console.is_terminal
        self._console = console
        self._rows = {name: _Cohort(probes) for name in cohorts}
        self._heartbeat: Heartbeat | None = None
        self._progress = Progress(
            TextColumn("{task.fields[cohort]:<28}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[state]}"),
            TimeElapsedColumn(),
            console=console,
            transient=False,
        )
        self._tasks: dict[str, TaskID] = {}
        for name in cohorts:
            self._tasks[name] = self._progress.add_task(name, total=probes, cohort=name, state="waiting", start=False)

    def __enter__(self) -> CanaryProgress:
        if self.live:
            self._progress.__enter__()
        else:
            self._heartbeat = Heartbeat(self._console, self.lines).__enter__()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self.live:
            self._progress.__exit__(exc_type, exc, tb)
        elif self._heartbeat is not None:
            beat, self._heartbeat = self._heartbeat, None
            beat.__exit__(exc_type, exc, tb)

    def status(self, cohort: str, state: str) -> None:
        if cohort in self._tasks:
            row = self._rows[cohort]
            row.state, row.started = state, row.started or time.monotonic()
            task = self._tasks[cohort]
            self._progress.start_task(task)
            self._progress.update(task, state=state)

    def advance(self, cohort: str, steps: int = 1, infra: int = 0, resumed: bool = False) -> None:
        """`steps` probes done (`infra` of their requests failed; `resumed`: found on disk, not run now)."""
        if cohort in self._tasks:
            row = self._rows[cohort]
            row.done, row.infra = row.done + steps, row.infra + infra
            row.resumed += steps if resumed else 0
            self._progress.advance(self._tasks[cohort], steps)

    def lines(self) -> list[str]:
        """A line per cohort started and not finished (every started cohort at the end)."""
        out = []
        for name, row in self._rows.items():
            if row.started is None or (row.done >= row.total and self._heartbeat is not None):
                continue
            elapsed = time.monotonic() - row.started
            eta_s = eta(row.done - row.resumed, row.total - row.done, elapsed)
            out.append(line("canary", name, row.done, row.total, row.infra, elapsed, eta_s) + f" ({row.state})")
        return out
