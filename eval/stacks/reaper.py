"""Servers die with the driver, even when the driver is killed with SIGKILL.

Every server process group gets a reaper: a tiny process, in its own session (a Ctrl-C to the terminal or a
kill of the driver's group does not take it first), that blocks reading a pipe whose write end only the driver
holds. However the driver ends, the kernel closes that write end; the read returns EOF and the reaper TERMs the
server's process group, then KILLs what is left after a grace period. A normal stop first writes one byte: the
reaper then exits without touching anything (the group id may have been reused by then).

Why not PR_SET_PDEATHSIG: it fires when the *thread* that forked the child exits, not the process, and stacks
are started from worker threads (the canary), so servers would die with a thread pool or outlive the driver.
The write end is opened close-on-exec and is passed to no child, so only the driver keeps the pipe open.

A docker container is not in any process group of the driver's: its reaper (`ContainerReaper`) stops and
removes the container through the Docker Engine API instead (a unix socket or plain TCP, stdlib only).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys

# Kept free of imports beyond the standard library's basics: it runs as `python -I -S -c`, about 20 ms to start.
# Both reapers start with WAIT: argv[1] is the pipe's read end; the process exits at once on a normal stop.
WAIT = r"""
import os, signal, sys, time
signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGHUP, signal.SIG_IGN)
while True:
    try:
        data = os.read(int(sys.argv[1]), 1)
        break
    except InterruptedError:
        continue
if data:
    sys.exit(0)
"""

REAPER_CODE = (
    WAIT
    + r"""
pgid, grace = int(sys.argv[2]), float(sys.argv[3])
def alive():
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
if alive():
    os.killpg(pgid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while alive() and time.monotonic() < deadline:
        time.sleep(0.1)
    if alive():
        os.killpg(pgid, signal.SIGKILL)
"""
)

# argv: fd, docker host (`unix:///path` or `tcp://host:port`), container id, grace seconds.
CONTAINER_REAPER_CODE = (
    WAIT
    + r"""
import http.client, socket
host, cid, grace = sys.argv[2], sys.argv[3], float(sys.argv[4])
class Unix(http.client.HTTPConnection):
    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(host[len("unix://"):])
def call(method, path):
    if host.startswith("unix://"):
        conn = Unix("localhost", timeout=grace + 30)
    else:
        conn = http.client.HTTPConnection(host[len("tcp://"):], timeout=grace + 30)
    try:
        conn.request(method, path)
        conn.getresponse().read()
    except OSError:
        pass
    finally:
        conn.close()
call("POST", f"/containers/{cid}/stop?t={int(grace)}")
call("DELETE", f"/containers/{cid}?force=1")
"""
)


class Reaper:
    """The driver's side of one server group's reaper: `disarm()` on a normal stop."""

    def __init__(self, pgid: int, grace_s: float = 5.0) -> None:
        self._spawn(REAPER_CODE, [str(pgid), str(grace_s)])

    def _spawn(self, code: str, args: list[str]) -> None:
        read_end, self._write_end = os.pipe()  # both close-on-exec (PEP 446): no other child inherits them
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", code, str(read_end), *args],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                pass_fds=(read_end,),
                start_new_session=True,
            )
        except BaseException:
            os.close(self._write_end)
            raise
        finally:
            os.close(read_end)
        self.pid = self._proc.pid

    def disarm(self, group_gone: bool = True) -> None:
        """The driver stopped the group: the reaper exits without killing anything (`group_gone`), or, when
        something of the group is left, it is let go as if the driver had died and kills what is left."""
        if self._write_end < 0:
            return
        if group_gone:
            with contextlib.suppress(OSError):
                os.write(self._write_end, b"x")
        os.close(self._write_end)
        self._write_end = -1
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._proc.wait(10)


class ContainerReaper(Reaper):
    """Stops and removes a docker container (`docker_host`: `unix:///path` or `tcp://host:port`) if the driver
    dies without stopping it. `disarm()` on a normal stop, as for a process group."""

    def __init__(self, docker_host: str, container_id: str, grace_s: float = 5.0) -> None:
        self._spawn(CONTAINER_REAPER_CODE, [docker_host, container_id, str(grace_s)])
