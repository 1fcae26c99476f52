"""The context-manager half of every stack (local processes, docker containers, Slurm jobs): entering starts the
stack and waits until it answers, stopping whatever did start if that fails; leaving stops it."""

from __future__ import annotations

from types import TracebackType
from typing import Self


class StartStop:
    """Base of the stacks: they define `start`, `wait_ready` and `stop`; `with stack:` does the rest."""

    def start(self) -> None:
        raise NotImplementedError

    def wait_ready(self, timeout_s: float | None = None) -> None:
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        try:
            self.start()
            self.wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
