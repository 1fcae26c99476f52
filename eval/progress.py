"""Progress lines for logs: where stderr is not a terminal (CI, `nohup`, a multi-day run watched through its log),
a live view draws nothing until the end, so each running stage prints one plain line per cohort instead, at least
every 30 s (`SPECQUAL_PROGRESS_EVERY_S` changes the period): done/total, infra failures, elapsed time, ETA.

`Heartbeat(console, lines)` prints `lines()` from a daemon thread while entered, and once more on exit so the log
ends with the final counts. `FileTally` counts a stage's progress from the files it writes.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

from rich.console import Console

EVERY_ENV = "SPECQUAL_PROGRESS_EVERY_S"
DEFAULT_EVERY_S = 30.0


def every_s() -> float:
    """The period of progress lines: `SPECQUAL_PROGRESS_EVERY_S` (seconds > 0), else 30."""
    try:
        value = float(os.environ.get(EVERY_ENV, DEFAULT_EVERY_S))
    except ValueError:
        return DEFAULT_EVERY_S
    return value if value > 0 else DEFAULT_EVERY_S


def clock(seconds: float | None) -> str:
    """`h:mm:ss`, or `-` when unknown."""
    if seconds is None:
        return "-"
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}"


def eta(finished_now: int, left: int, elapsed_s: float) -> float | None:
    """Seconds until `left` more are done at this session's rate (None before the first finishes)."""
    if left <= 0:
        return 0.0
    return left * elapsed_s / finished_now if finished_now > 0 else None


def line(stage: str, cohort: str, done: int, total: int, infra: int, elapsed_s: float, eta_s: float | None) -> str:
    """One progress line; the same shape for every stage, so a log can be grepped for `progress `."""
    return (
        f"progress {stage} {cohort}: {done}/{total} done, {infra} infra, elapsed {clock(elapsed_s)}, ETA {clock(eta_s)}"
    )


class Heartbeat:
    """Prints `lines()` on `console` every `every` seconds (default `every_s()`) while entered, and on exit."""

    def __init__(self, console: Console, lines: Callable[[], list[str]], every: float | None = None) -> None:
        self.console, self.lines = console, lines
        self.every = every if every is not None else every_s()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _print(self) -> None:
        for text in self.lines():
            self.console.print(text, markup=False, highlight=False, soft_wrap=True)

    def _beat(self) -> None:
        while not self._stop.wait(self.every):
            try:
                self._print()
            except Exception as e:  # a progress line must never end the run
                self.console.print(f"progress: {type(e).__name__}: {e}", markup=False)

    def __enter__(self) -> Heartbeat:
        self._thread = threading.Thread(target=self._beat, name="progress", daemon=True)
        self._thread.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._print()


class FileTally:
    """done/total of a stage that writes one file per unit (grading: grade.json, classification: labels.json):
    the units are `root.glob(units)`, and one is done when `done_name` sits next to it (written during this stage,
    with `fresh`, for a stage that rewrites every unit)."""

    def __init__(self, stage: str, name: str, root: Path, units: str, done_name: str, fresh: bool = False) -> None:
        self.stage, self.name, self.root, self.units, self.done_name = stage, name, root, units, done_name
        self.since = time.time() - 1.0 if fresh else None  # file times are coarser than time.time()
        self.started = time.monotonic()
        self.done_before = self.count()[0]

    def count(self) -> tuple[int, int]:
        units = list(self.root.glob(self.units))
        done = 0
        for unit in units:
            try:
                written = (unit.parent / self.done_name).stat().st_mtime
            except OSError:  # not there yet (or being replaced)
                continue
            done += self.since is None or written >= self.since
        return done, len(units)

    def lines(self) -> list[str]:
        done, total = self.count()
        elapsed = time.monotonic() - self.started
        return [
            line(self.stage, self.name, done, total, 0, elapsed, eta(done - self.done_before, total - done, elapsed))
        ]
