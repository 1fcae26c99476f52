"""Runs inside a Slurm job: start one process of a stack and publish where it listens.

    python -m eval.executors.slurm.jobstep --endpoints DIR --key server.0 --bind 0.0.0.0 \
        --python /envs/vllm/bin/python --log LOG -- {python} -m vllm.entrypoints.openai.api_server ...

It picks a free port on this node, waits for the endpoint files of the processes its command line names
(`{url.prefill.0}`: a router waits for its workers), fills the placeholders, writes
`DIR/<job id>/<key>.json` (node, host, port; atomically), then replaces itself with the command (`exec`), with
stdout and stderr appended to the log. specqual discovers the stack from those files. Standard library only.
"""

from __future__ import annotations

import argparse
import os
import re
import socket
import sys
import time
from pathlib import Path

from eval.secrets import redact_argv
from store.record_io import read_record, write_record
from store.stack_records import Endpoint

_PLACEHOLDER = re.compile(r"\{(python|host|(?:port|url)\.[a-z]+\.\d+)\}")
_WILDCARD = ("0.0.0.0", "::", "")


def advertised_host(bind: str) -> str:
    """The address others use: the node's name for a wildcard bind (its IP if the name does not resolve),
    else the bind address itself."""
    if bind not in _WILDCARD:
        return bind
    name = socket.gethostname()
    try:
        socket.gethostbyname(name)
        return name
    except OSError:
        return primary_ip()


def primary_ip() -> str:
    """This node's address on its default route (a UDP connect sends nothing), or loopback."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("10.255.255.255", 1))
            return str(s.getsockname()[0])
        except OSError:
            return "127.0.0.1"


def free_port(bind: str) -> int:
    with socket.socket(socket.AF_INET6 if ":" in bind else socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((bind, 0))
        return int(s.getsockname()[1])


def job_dir(endpoints: Path) -> Path:
    return endpoints / os.environ.get("SLURM_JOB_ID", "nojob")


def wait_for(keys: set[str], directory: Path, poll_s: float = 0.5) -> dict[str, Endpoint]:
    """Endpoint records of `keys`, waiting until each exists (the job's time limit bounds the wait)."""
    found: dict[str, Endpoint] = {}
    while len(found) < len(keys):
        for key in keys - set(found):
            rec = read_record(directory / f"{key}.json", Endpoint)
            if rec is not None:
                found[key] = rec
        if len(found) < len(keys):
            time.sleep(poll_s)
    return found


def mapping_for(argv: list[str], key: str, python: str, bind: str, port: int, directory: Path) -> dict[str, str]:
    needed = {m.group(1) for a in argv for m in _PLACEHOLDER.finditer(a)}
    peers = {n.split(".", 1)[1] for n in needed if n.startswith("url.")} - {key}
    mapping = {"python": python, "host": bind, f"port.{key}": str(port)}
    mapping[f"url.{key}"] = f"http://{advertised_host(bind)}:{port}"
    for peer, rec in wait_for(peers, directory).items():
        mapping[f"url.{peer}"] = rec.url
        mapping[f"port.{peer}"] = str(rec.port)
    return mapping


def render(argv: list[str], mapping: dict[str, str]) -> list[str]:
    return [_PLACEHOLDER.sub(lambda m: mapping[m.group(1)], a) for a in argv]


def record(key: str, bind: str, port: int, argv: list[str], log: Path) -> Endpoint:
    role, _, index = key.partition(".")
    host = advertised_host(bind)
    return Endpoint(
        key=key,
        role=role,
        index=int(index),
        node=os.environ.get("SLURMD_NODENAME", socket.gethostname()),
        hostname=socket.gethostname(),
        host=host,
        bind=bind,
        port=port,
        url=f"http://{host}:{port}",
        job_id=os.environ.get("SLURM_JOB_ID"),
        step_id=os.environ.get("SLURM_STEP_ID"),
        cuda_visible_devices=os.environ.get("CUDA_VISIBLE_DEVICES"),
        pid=os.getpid(),
        argv=redact_argv(argv),
        log=str(log),
        started_at=time.time(),
    )


def main(args: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="jobstep", description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--endpoints", type=Path, required=True)
    p.add_argument("--key", required=True, help="role.index, e.g. server.0")
    p.add_argument("--bind", default="0.0.0.0")
    p.add_argument("--python", default=sys.executable)
    p.add_argument("--log", type=Path, required=True)
    p.add_argument("argv", nargs=argparse.REMAINDER)
    ns = p.parse_args(args)
    argv = ns.argv[1:] if ns.argv[:1] == ["--"] else ns.argv
    if not argv:
        p.error("give the command after --")
    directory = job_dir(ns.endpoints)
    port = free_port(ns.bind)
    if ns.key.split(".")[0] in ("prefill", "decode"):
        # KV transfer side channel: its own port (workers may share a node), reachable by the node's name.
        os.environ.setdefault("VLLM_NIXL_SIDE_CHANNEL_PORT", str(free_port(ns.bind)))
        os.environ.setdefault("VLLM_NIXL_SIDE_CHANNEL_HOST", advertised_host(ns.bind))
    rendered = render(argv, mapping_for(argv, ns.key, ns.python, ns.bind, port, directory))
    ns.log.parent.mkdir(parents=True, exist_ok=True)
    write_record(directory / f"{ns.key}.json", record(ns.key, ns.bind, port, rendered, ns.log))
    fd = os.open(ns.log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.execvp(rendered[0], rendered)


if __name__ == "__main__":
    main()
