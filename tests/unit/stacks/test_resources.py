"""Listening ports are picked outside the kernel's ephemeral range, distinct, and free."""

from __future__ import annotations

import socket
from pathlib import Path

from eval.stacks.resources import LISTEN_PORTS, free_ports


def test_ports_are_free_distinct_and_below_the_ephemeral_range() -> None:
    ports = free_ports(20)
    assert len(set(ports)) == 20
    assert all(LISTEN_PORTS[0] <= p < LISTEN_PORTS[1] for p in ports)
    low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    assert LISTEN_PORTS[1] <= low  # the kernel's outgoing connections never take them
    for p in ports:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind(("127.0.0.1", p))
