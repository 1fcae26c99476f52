"""Run a command with a time limit that kills its whole process tree, and bounded output.

The command gets its own session (process group); at the limit the group is killed with SIGKILL. Output
(stdout and stderr merged) is read as it comes; past `max_bytes` only the head and the tail are kept, with a
marker saying how much was dropped, so a command printing without end cannot exhaust memory.
"""

from __future__ import annotations

import collections
import contextlib
import os
import resource
import signal
import subprocess
import threading
from collections.abc import Callable

from eval.protocols import ExecResult

CHUNK = 65536


class Collector:
    """Keeps the first and last `max_bytes // 2` bytes of a stream."""

    def __init__(self, max_bytes: int) -> None:
        self.half = max(1, max_bytes // 2)
        self.head = bytearray()
        self.tail: collections.deque[bytes] = collections.deque()
        self.tail_len = 0
        self.dropped = 0

    def add(self, data: bytes) -> None:
        room = self.half - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if not data:
            return
        self.tail.append(data)
        self.tail_len += len(data)
        while self.tail_len - len(self.tail[0]) >= self.half:
            self.tail_len -= len(self.tail[0])
            self.dropped += len(self.tail.popleft())

    def text(self) -> str:
        tail = b"".join(self.tail)
        if self.tail_len > self.half:
            cut = self.tail_len - self.half
            self.dropped += cut
            tail = tail[cut:]
            self.tail = collections.deque([tail])
            self.tail_len = len(tail)
        middle = f"\n[... {self.dropped} bytes of output truncated ...]\n".encode() if self.dropped else b""
        return (bytes(self.head) + middle + tail).decode("utf-8", errors="replace")


def memory_limit(memory_gb: float | None) -> Callable[[], None] | None:
    """A preexec function that caps the address space of the command and its children."""
    if memory_gb is None:
        return None
    limit = int(memory_gb * 2**30)

    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return apply


def run_limited(
    argv: list[str],
    timeout_s: float,
    max_bytes: int = 1_000_000,
    env: dict[str, str] | None = None,
    preexec: Callable[[], None] | None = None,
    stdin: bytes | None = None,
) -> ExecResult:
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=env,
        start_new_session=True,
        preexec_fn=preexec,
    )
    collector = Collector(max_bytes)
    reader = threading.Thread(target=_drain, args=(proc, collector), daemon=True)
    reader.start()
    if stdin is not None and proc.stdin is not None:
        try:
            proc.stdin.write(stdin)
            proc.stdin.close()
        except BrokenPipeError:
            pass
    timed_out = False
    try:
        code = proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        timed_out = True
        kill_group(proc.pid)
        code = proc.wait()
    reader.join(timeout=10)
    if reader.is_alive():  # a process outside the group still holds the pipe: stop reading, do not hang
        kill_group(proc.pid)
    return ExecResult(exit_code=code, output=collector.text(), timed_out=timed_out)


def _drain(proc: subprocess.Popen[bytes], collector: Collector) -> None:
    assert proc.stdout is not None
    while chunk := proc.stdout.read1(CHUNK):  # type: ignore[attr-defined]
        collector.add(chunk)


def kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
