"""The P/D isolation guard (scripts/gpu/pd_checks.py): each worker's NIXL side channel is its own port, distinct
from every other worker's and from every HTTP port, and held by a process of that worker's own group; each decode
worker's log shows a passed handshake. Real processes listen on real ports (a child in the worker's group holds
the socket, as vLLM's engine core does); a port held by another group is reported."""

from __future__ import annotations

import socket
import sys
import time
from pathlib import Path

import pytest

from eval.stacks.process import ManagedProcess
from eval.stacks.resources import free_ports
from tests.doubles.pd_stack import PdStackDouble

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "scripts" / "gpu"))
import pd_checks

# The worker's process forks a child that listens (vLLM's side channel lives in the engine core, a child).
LISTEN = """
import os, socket, sys, time
if os.fork() == 0:
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(); time.sleep(120)
else:
    time.sleep(120)
"""


def worker(tmp_path: Path, role: str, side: int, http: int, listen_on: int | None) -> ManagedProcess:
    argv = [sys.executable, "-c", LISTEN if listen_on else "import time; time.sleep(120)"]
    argv += [str(listen_on)] if listen_on else []
    env = {"VLLM_NIXL_SIDE_CHANNEL_PORT": str(side)}
    proc = ManagedProcess(role, 0, argv, env, env, tmp_path / f"{role}-{side}.log", http)
    proc.start()
    return proc


def wait_listening(port: int) -> None:
    for _ in range(100):
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise AssertionError(f"nothing listens on {port}")


@pytest.fixture
def ports() -> list[int]:
    return free_ports(8)


def test_pairs_with_their_own_side_channels_pass(tmp_path: Path, ports: list[int]) -> None:
    a, b, c, d, ha, hb, hc, hd = ports
    procs = [worker(tmp_path, "prefill", a, ha, a), worker(tmp_path, "decode", b, hb, b)]
    other = [worker(tmp_path, "prefill", c, hc, c), worker(tmp_path, "decode", d, hd, d)]
    try:
        for p in (a, b, c, d):
            wait_listening(p)
        result = pd_checks.side_channels({"x": PdStackDouble(procs), "y": PdStackDouble(other)})
        assert result.ok, result.problems
        assert {r.side_channel_port for r in result.workers} == {a, b, c, d}
        assert all(r.own for r in result.workers)
    finally:
        for p in procs + other:
            p.stop(5)


def test_a_side_channel_held_by_another_group_or_shared_is_refused(tmp_path: Path, ports: list[int]) -> None:
    a, b, _, _, ha, hb, hc, _ = ports
    leftover = worker(tmp_path, "prefill", a, hc, a)  # an earlier call's server still holds port a
    wait_listening(a)
    procs = [worker(tmp_path, "prefill", a, ha, None), worker(tmp_path, "decode", b, hb, b)]
    twin = [worker(tmp_path, "decode", b, hc, None)]  # a second pair given the same side channel as decode b
    try:
        wait_listening(b)
        result = pd_checks.side_channels({"x": PdStackDouble(procs), "y": PdStackDouble(twin)})
        assert not result.ok
        text = " ".join(result.problems)
        assert f"x/prefill.0: side channel {a} is held by pids" in text and "not by its own" in text
        assert f"y/decode.0: side channel {b} is also x/decode.0's" in text
        same = worker(tmp_path, "decode", ha, ha, None)  # its side channel is its own HTTP port
        twin.append(same)
        clash = pd_checks.side_channels({"x": PdStackDouble([same])})
        assert any("also an HTTP port" in p for p in clash.problems)
    finally:
        for p in [leftover, *procs, *twin]:
            p.stop(5)


def test_handshakes_read_the_decode_logs(tmp_path: Path) -> None:
    good = ManagedProcess("decode", 0, [], {}, {}, tmp_path / "good.log", 1)
    good.log_path.write_text("INFO ... NIXL compatibility check passed (hash: abc)\n")
    bad = ManagedProcess("decode", 0, [], {}, {}, tmp_path / "bad.log", 2)
    bad.log_path.write_text("RuntimeError: Remote NIXL agent engine ID mismatch. Expected a,received b.\n")
    assert pd_checks.handshakes({"g": PdStackDouble([good])}).ok
    result = pd_checks.handshakes({"g": PdStackDouble([good]), "b": PdStackDouble([bad])})
    assert not result.ok and "b/decode.0: 0 handshakes passed" in result.problems[0]
