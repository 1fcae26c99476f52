"""One server process: started in its own process group, logged to a file, stopped as a whole group.

vLLM starts helper processes (the engine core, workers); they stay in the server's process group, so stopping
the group (TERM, then KILL) leaves nothing behind. Zombies that nobody reaps do not count as alive. Each group
has a reaper (eval.stacks.reaper) that kills it if the driver dies without stopping it, SIGKILL included.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import subprocess
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from eval.secrets import redact_argv, redact_env
from eval.stacks.reaper import Reaper


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def group_members(pgid: int) -> list[int]:
    """Live (non-zombie) processes of a process group, read from /proc."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        if int(fields[2]) == pgid and fields[0] != "Z":
            members.append(int(entry.name))
    return members


def processes_with_env(marker: str) -> list[int]:
    """Processes whose environment contains `marker` (e.g. `SPECQUAL_STACK_ID=...`): nothing may survive a stop."""
    needle = marker.encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if needle in (entry / "environ").read_bytes().split(b"\0"):
                stat = (entry / "stat").read_text()
                if stat[stat.rfind(")") + 2] != "Z":
                    found.append(int(entry.name))
        except OSError:
            continue
    return found


@dataclass
class ManagedProcess:
    role: str
    index: int
    argv: list[str]
    env: dict[str, str]  # the complete environment of the process
    env_shown: dict[str, str]  # the variables the stack sets (for the reproducible command line)
    log_path: Path
    port: int | None = None
    popen: subprocess.Popen[bytes] | None = field(default=None, repr=False)
    reaper: Reaper | None = field(default=None, repr=False)

    @property
    def key(self) -> str:
        return f"{self.role}.{self.index}"

    @property
    def pid(self) -> int | None:
        return self.popen.pid if self.popen else None

    def shell(self) -> str:
        """The command line, with the variables the stack sets, to reproduce this process by hand; secrets are
        redacted (it goes into logs, stack.json and the terminal: see eval.secrets)."""
        env = " ".join(f"{k}={shlex.quote(v)}" for k, v in sorted(redact_env(self.env_shown).items()))
        return (env + " " if env else "") + shlex.join(redact_argv(self.argv))

    def start(self) -> None:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log_path, "ab") as log:
            log.write(f"=== specqual {now_iso()}: {self.shell()}\n".encode())
            log.flush()
            self.popen = subprocess.Popen(
                self.argv,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.reaper = Reaper(self.popen.pid)  # the group dies with the driver, even on SIGKILL

    def exit_code(self) -> int | None:
        return self.popen.poll() if self.popen else None

    def running(self) -> bool:
        """Started and not exited."""
        return self.popen is not None and self.exit_code() is None

    def log_tail(self, lines: int = 60) -> str:
        try:
            data = self.log_path.read_bytes()[-200_000:]
        except OSError:
            return ""
        return "\n".join(data.decode("utf-8", "replace").splitlines()[-lines:])

    def stop(self, term_timeout_s: float = 30.0) -> None:
        """TERM the whole group, wait, then KILL what is left; idempotent."""
        if self.popen is None:
            return
        pgid = self.popen.pid  # start_new_session: the leader's pid is the group id
        self._signal(pgid, signal.SIGTERM)
        gone = self._wait_group(pgid, term_timeout_s)
        if not gone:
            self._signal(pgid, signal.SIGKILL)
            gone = self._wait_group(pgid, 10.0)
        if self.reaper is not None:
            self.reaper.disarm(group_gone=gone)
            self.reaper = None

    def _signal(self, pgid: int, sig: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, sig)

    def _wait_group(self, pgid: int, timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        assert self.popen is not None
        while time.monotonic() < deadline:
            self.popen.poll()
            if self.popen.returncode is not None and not group_members(pgid):
                return True
            time.sleep(0.2)
        return False
