"""Local resources a launch takes: free TCP ports and GPUs from a pool (assigned via CUDA_VISIBLE_DEVICES)."""

from __future__ import annotations

import random
import socket
import threading

# Listening ports are picked below Linux's default ephemeral range (32768-60999). A port the kernel hands out
# for bind(0) is one it also hands out as the source port of outgoing connections, so on a busy machine (vLLM
# workers, NIXL, HTTP clients) it was taken again before the server bound it: a router died on "Address already
# in use" for a port picked a minute earlier.
LISTEN_PORTS = (20000, 32768)
_rng = random.Random()


def free_port(host: str = "127.0.0.1") -> int:
    """A listening port that was free a moment ago, outside the ephemeral range; the server binds it right after."""
    for _ in range(200):
        port = _rng.randrange(*LISTEN_PORTS)
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind((host, port))
            except OSError:
                continue
            return port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:  # the range is full: let the kernel pick
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
