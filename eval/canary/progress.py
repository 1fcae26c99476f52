"""The canary's progress view: one line per cohort (state, probes done) on stderr, via rich."""

from __future__ import annotations

from types import TracebackType

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn


class CanaryProgress:
    """`with CanaryProgress(console, cohorts, probes_per_cohort) as p: p.status(c, "probing"); p.advance(c)`."""

    def __init__(self, console: Console, cohorts: list[str], probes: int) -> None:
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
        self._progress.__enter__()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._progress.__exit__(exc_type, exc, tb)

    def status(self, cohort: str, state: str) -> None:
        if cohort in self._tasks:
            task = self._tasks[cohort]
            self._progress.start_task(task)
            self._progress.update(task, state=state)

    def advance(self, cohort: str, steps: int = 1) -> None:
        if cohort in self._tasks:
            self._progress.advance(self._tasks[cohort], steps)
