"""Local resources a launch takes: free TCP ports and GPUs from a pool (assigned via CUDA_VISIBLE_DEVICES)."""

from __future__ import annotations

import socket
import threading


def free_port(host: str = "127.0.0.1") -> int:
    """A port that was free a moment ago (the kernel picks it); vLLM binds it right after."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def free_ports(n: int, host: str = "127.0.0.1") -> list[int]:
    """`n` distinct free ports."""
    ports: list[int] = []
    while len(ports) < n:
        p = free_port(host)
        if p not in ports:
            ports.append(p)
    return ports


class GpuPoolExhausted(Exception):
    """More GPUs were asked for than the pool has free."""


class GpuPool:
    """GPU ids shared by the stacks of one process; thread-safe."""

    def __init__(self, ids: list[int]) -> None:
        self._free = list(ids)
        self._lock = threading.Lock()

    def acquire(self, n: int) -> list[int]:
        with self._lock:
            if n > len(self._free):
                raise GpuPoolExhausted(f"asked for {n} GPUs, {len(self._free)} free ({self._free})")
            taken, self._free = self._free[:n], self._free[n:]
            return taken

    def release(self, ids: list[int]) -> None:
        with self._lock:
            self._free = sorted(set(self._free) | set(ids))

    @property
    def free(self) -> list[int]:
        with self._lock:
            return list(self._free)
