"""Checks around a P/D (prefill/decode) run on the node: where the workers run, what the transfer left to compute.

- `gpu_placement`: every process on the GPU(s) (nvidia-smi), matched to its cohort and worker through its process
  group (each server is started as its own session, so the engine core's group id is the API server's pid).
- `smoke_request`: one completion through each stack's router before the canary, printing the decode side's
  `cached_tokens` (the tokens that arrived through the KV transfer) of `prompt_tokens`.
- `tail_summary`: over the probe records, prompt tokens minus cached tokens (the tokens the decode worker computed).
- `worker_metrics`: the prefix-cache, KV-connector and speculative counters of each worker's `/metrics`.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import httpx

from store.gpu_records import GpuPlacement, GpuProcess, Handshake, Handshakes, SideChannel, SideChannels, SmokeReply

METRIC_LINES = re.compile(r"^vllm:(prefix_cache|external_prefix_cache|prompt_tokens|spec_decode|kv_|nixl)")


def _gpu_apps() -> list[GpuProcess]:
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return []
    query = ["--query-compute-apps=pid,gpu_uuid,used_memory", "--format=csv,noheader,nounits"]
    out = subprocess.run([exe, *query], capture_output=True, text=True, timeout=30).stdout
    apps = []
    for line in out.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) == 3 and parts[0].isdigit():
            mem = int(parts[2]) if parts[2].isdigit() else None
            apps.append(GpuProcess(pid=int(parts[0]), gpu_uuid=parts[1], used_mib=mem))
    return apps


def owner(pid: int, groups: dict[int, tuple[str, str]]) -> tuple[str, str] | None:
    """(cohort, role.index) of the stack process whose group `pid` belongs to, or None."""
    try:
        return groups.get(os.getpgid(pid))
    except OSError:
        return None


def gpu_placement(stacks: dict[str, Any]) -> GpuPlacement:
    """GPU processes matched to (cohort, worker): the provenance that both workers share the one GPU."""
    groups = {p.pid: (name, f"{p.role}.{p.index}") for name, st in stacks.items() for p in st.procs if p.pid}
    apps = _gpu_apps()
    for app in apps:
        who = owner(app.pid, groups)
        app.cohort, app.worker = who if who else (None, None)
    uuids = sorted({a.gpu_uuid for a in apps})
    return GpuPlacement(gpu_uuids=uuids, gpus_used=len(uuids), processes=apps)


def smoke_request(base_url: str, served: str, prompt_len: int = 129) -> SmokeReply:
    """One greedy completion of `prompt_len` token ids through the router; usage as the decode worker reports it."""
    body = {"model": served, "prompt": [100 + i % 300 for i in range(prompt_len)], "max_tokens": 4, "temperature": 0}
    try:
        r = httpx.post(f"{base_url}/v1/completions", json=body, timeout=150)
    except httpx.HTTPError as e:
        return SmokeReply(error=f"{type(e).__name__}: {e}")
    if r.status_code != 200:
        return SmokeReply(error=f"HTTP {r.status_code}: {r.text[:500]}")
    usage = r.json().get("usage") or {}
    details = usage.get("prompt_tokens_details") or {}
    return SmokeReply(prompt_tokens=usage.get("prompt_tokens"), cached_tokens=details.get("cached_tokens"))


def tail_summary(cohort_dir: Path) -> dict[str, dict[str, int]]:
    """{mode/role: {decode-side computed prompt tokens (prompt - cached): count}} over the probe records."""
    out: dict[str, Counter[str]] = {}
    for f in sorted((cohort_dir / "probes").glob("*.json")):
        rec = json.loads(f.read_text())
        key = f"{rec.get('mode')}/{rec.get('role')}"
        p, c = rec.get("prompt_tokens"), rec.get("cached_tokens")
        tail = "unknown" if p is None or c is None else str(p - c)
        out.setdefault(key, Counter())[tail] += 1
    return {k: dict(v) for k, v in out.items()}


def worker_metrics(stack: Any, path: Path) -> None:
    """The counters of every worker's `/metrics` that say what was cached, transferred and speculated."""
    lines: list[str] = []
    for p in stack.procs:
        if p.role == "router":
            continue
        try:
            text = httpx.get(f"http://{stack.host}:{p.port}/metrics", timeout=20).text
        except httpx.HTTPError as e:
            lines.append(f"# {p.role}.{p.index}: {e}")
            continue
        lines.append(f"# {p.role}.{p.index}")
        lines += [ln for ln in text.splitlines() if METRIC_LINES.match(ln)]
    path.write_text("\n".join(lines) + "\n")


HANDSHAKE_OK = "NIXL compatibility check passed"
HANDSHAKE_BAD = ("engine ID mismatch", "compatibility hash mismatch", "Failed to decode NixlHandshakePayload")


def _listeners(port: int) -> set[int]:
    """Pids of the processes holding a TCP socket that listens on `port` (/proc/net/tcp*, then each pid's fds)."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            f = line.split()
            if len(f) > 9 and f[3] == "0A" and int(f[1].rsplit(":", 1)[1], 16) == port:
                inodes.add(f[9])
    pids = set()
    for fd_dir in Path("/proc").glob("[0-9]*/fd"):
        try:
            links = {os.readlink(fd) for fd in fd_dir.iterdir()}
        except OSError:
            continue
        if any(f"socket:[{i}]" in links for i in inodes):
            pids.add(int(fd_dir.parent.name))
    return pids


def side_channels(stacks: dict[str, Any]) -> SideChannels:
    """Each P/D worker's NIXL side channel (`VLLM_NIXL_SIDE_CHANNEL_PORT`): its own port, distinct from every other
    worker's side channel and from every HTTP port of the run, and listened on by a process of that worker's own
    process group (not by a leftover of an earlier call on a warm node, nor by another pair). `ok` is False, with
    the problems listed, when any of that does not hold."""
    http = {p.port for st in stacks.values() for p in st.procs if p.port}
    workers = [(name, p) for name, st in stacks.items() for p in st.procs if p.role in ("prefill", "decode")]
    seen: dict[int, str] = {}
    rows, problems = [], []
    for name, p in workers:
        key = f"{name}/{p.role}.{p.index}"
        raw = p.env_shown.get("VLLM_NIXL_SIDE_CHANNEL_PORT")
        port = int(raw) if raw and raw.isdigit() else None
        holders = sorted(_listeners(port)) if port else []
        groups = {_pgid(pid) for pid in holders}
        own = bool(holders) and groups == {p.pid}
        if port is None:
            problems.append(f"{key}: no VLLM_NIXL_SIDE_CHANNEL_PORT")
        elif port in seen:
            problems.append(f"{key}: side channel {port} is also {seen[port]}'s")
        elif port in http:
            problems.append(f"{key}: side channel {port} is also an HTTP port of the run")
        elif not own:
            problems.append(
                f"{key}: side channel {port} is held by pids {holders} (groups {sorted(groups)}), not by its own"
            )
        if port is not None:
            seen.setdefault(port, key)
        rows.append(SideChannel(worker=key, pid=p.pid, side_channel_port=port, listeners=holders, own=own))
    return SideChannels(ok=not problems, problems=problems, workers=rows)


def _pgid(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except OSError:
        return None


def handshakes(stacks: dict[str, Any]) -> Handshakes:
    """After a request went through each pair: every decode worker's log says its NIXL handshake passed (vLLM
    checks the peer's engine id and configuration hash) and none failed. `ok` False lists what did not hold."""
    problems, rows = [], []
    for name, st in stacks.items():
        for p in st.procs:
            if p.role != "decode":
                continue
            text = p.log_path.read_text(errors="replace") if p.log_path.is_file() else ""
            passed = text.count(HANDSHAKE_OK)
            bad = [b for b in HANDSHAKE_BAD if b in text]
            if not passed or bad:
                problems.append(f"{name}/decode.{p.index}: {passed} handshakes passed, failures {bad}")
            rows.append(Handshake(worker=f"{name}/decode.{p.index}", passed=passed, failures=bad))
    return Handshakes(ok=not problems, problems=problems, workers=rows)
