"""Driver overhead: round trips per second per core of specqual's rollout driver against a zero-latency server.

A zero-latency OpenAI-compatible server (raw asyncio, its own process, pinned to its own core) answers every
chat request at once with a fixed `bash` tool call. The driver under test runs 256 trajectories concurrently,
pinned to one core, each for a fixed number of turns; we measure wall time and the driver process's CPU time.
"round trips/s per core" = round trips / CPU seconds of the driver process: what one core of the machine that
drives a GPU server can sustain. Target: >= 1,000.

Compared side by side on the same server:
  specqual  the full `run_rollouts` path (scheduler, agent loop, raw aiohttp client, response validation with
            openai types, trajectory and verdict files), with an in-process sandbox that runs nothing
            (a benchmark-only stand-in: sandboxes are not what is measured);
  aiohttp   the floor: bare aiohttp re-serializing the conversation each turn, recording nothing;
  openai    the openai SDK's AsyncOpenAI `chat.completions.create` with the same growing conversation;
  mini      mini-swe-agent's model client (`LitellmModel.query`) in 256 threads, the way its batch runner
            drives models; installed from PyPI into benchmarks/.venv-mini by this script.

    .venv/bin/python benchmarks/bench_driver.py                  # all three, 256 trajectories x 20 turns
    .venv/bin/python benchmarks/bench_driver.py --only specqual --trajectories 64 --turns 10
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
MINI_VENV = HERE / ".venv-mini"
PROBLEM = "The function `parse_interval` fails on open intervals such as `(1, 2]`. " * 80  # ~6 KB
OBSERVATION_TEXT = "file_a.py\nfile_b.py\nsetup.cfg\ntests/\n" * 4
CONTENT = "Let me list the files.\n```bash\nls\n```"


def fixed_response() -> bytes:
    call = {"id": "call_0", "type": "function", "function": {"name": "bash", "arguments": '{"command": "ls"}'}}
    body = {
        "id": "chatcmpl-bench",
        "object": "chat.completion",
        "created": 0,
        "model": "bench",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": CONTENT, "tool_calls": [call]},
                "finish_reason": "tool_calls",
            }
        ],
        "usage": {"prompt_tokens": 2000, "completion_tokens": 20, "total_tokens": 2020},
    }
    data = json.dumps(body).encode()
    head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n"
    return head.encode() + data


class _ZeroLatency(asyncio.Protocol):
    """HTTP/1.1 keep-alive: read headers and Content-Length bytes of body, answer the fixed response."""

    response = fixed_response()

    def connection_made(self, transport: Any) -> None:
        self.transport = transport
        self.buffer = bytearray()

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while True:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            length = 0
            for line in bytes(self.buffer[:end]).split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            if len(self.buffer) < end + 4 + length:
                return
            del self.buffer[: end + 4 + length]
            self.transport.write(self.response)


def serve(port_file: str, core: int | None) -> None:
    if core is not None:
        os.sched_setaffinity(0, {core})

    async def main() -> None:
        server = await asyncio.get_running_loop().create_server(_ZeroLatency, "127.0.0.1", 0, backlog=4096)
        Path(port_file).write_text(str(server.sockets[0].getsockname()[1]))
        await server.serve_forever()

    asyncio.run(main())


def start_server(core: int | None) -> tuple[subprocess.Popen[bytes], str]:
    port_file = tempfile.mktemp(prefix="bench-port-")
    argv = [sys.executable, __file__, "--serve", port_file, "--server-core", str(core if core is not None else -1)]
    proc = subprocess.Popen(argv)
    deadline = time.monotonic() + 30
    while not (Path(port_file).exists() and Path(port_file).read_text()):
        if time.monotonic() > deadline or proc.poll() is not None:
            raise RuntimeError("the zero-latency server did not start")
        time.sleep(0.05)
    return proc, f"http://127.0.0.1:{Path(port_file).read_text()}"


class NullSandbox:
    """Benchmark-only sandbox: runs nothing, returns a fixed listing (sandbox cost is not what is measured)."""

    workdir = "/testbed"

    def execute(self, command: str, timeout_s: float) -> Any:
        from eval.protocols import ExecResult

        return ExecResult(0, OBSERVATION_TEXT)

    def diff(self) -> str:
        return ""

    def close(self) -> None:
        pass


def bench_specqual(base_url: str, trajectories: int, turns: int) -> dict[str, Any]:
    import eval.agent.toolcall  # noqa: F401  (imports are not what is measured)
    from eval.protocols import Task
    from eval.rollout.run import run_rollouts
    from eval.spec.load import load_spec
    from eval.store.run import open_run

    with tempfile.TemporaryDirectory() as tmp:
        cohort = Path(tmp) / "bench.yaml"
        cohort.write_text(
            "name: bench\nmodel: {path: /models/bench, served_name: bench}\nbuilds: {b: {env: /opt/none}}\n"
            "workloads:\n  swebench:\n    path: none\n    repeats: 1\n"
            f"    concurrency: {trajectories}\n"
            f"    agent: {{kind: toolcall, max_turns: {turns}, tool_choice: required}}\n"
        )
        loaded = load_spec([str(cohort)])
        tasks = [Task(f"bench__t-{i}", "bench/t", "0" * 40, PROBLEM, "", "", [], []) for i in range(trajectories)]
        run = open_run(loaded, Path(tmp) / "results", "bench")
        cpu, wall = time.process_time(), time.perf_counter()
        summary = asyncio.run(
            run_rollouts(loaded, run, "b", base_url, tasks, sandbox_factory=lambda task: NullSandbox())
        )
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    if summary.completed != trajectories:
        raise RuntimeError(f"specqual: only {summary.completed}/{trajectories} trajectories completed")
    return {"round_trips": summary.turns, "cpu_s": cpu, "wall_s": wall}


def bench_openai(base_url: str, trajectories: int, turns: int) -> dict[str, Any]:
    from openai import AsyncOpenAI

    from eval.agent.tools import tool_definitions

    tools = tool_definitions(["bash", "submit"])

    async def main() -> int:
        import httpx

        limits = httpx.Limits(max_connections=trajectories, max_keepalive_connections=trajectories)
        http = httpx.AsyncClient(limits=limits, timeout=httpx.Timeout(600.0))
        client = AsyncOpenAI(base_url=base_url + "/v1", api_key="none", max_retries=2, http_client=http)

        async def one() -> int:
            messages: list[Any] = [{"role": "system", "content": "x" * 500}, {"role": "user", "content": PROBLEM}]
            for _ in range(turns):
                r = await client.chat.completions.create(
                    model="bench",
                    messages=messages,
                    tools=tools,
                    tool_choice="required",
                    max_tokens=64,  # type: ignore[arg-type]
                )
                call = r.choices[0].message.tool_calls[0]  # type: ignore[index]
                messages.append(r.choices[0].message.model_dump(exclude_none=True))
                messages.append({"role": "tool", "tool_call_id": call.id, "content": OBSERVATION_TEXT})
            return turns

        done = await asyncio.gather(*(one() for _ in range(trajectories)))
        await client.close()
        return sum(done)

    cpu, wall = time.process_time(), time.perf_counter()
    n = asyncio.run(main())
    return {"round_trips": n, "cpu_s": time.process_time() - cpu, "wall_s": time.perf_counter() - wall}


def bench_aiohttp(base_url: str, trajectories: int, turns: int) -> dict[str, Any]:
    """The floor: bare aiohttp posting the whole conversation re-serialized each turn, nothing recorded."""
    import aiohttp

    from eval.agent.tools import tool_definitions

    tools = tool_definitions(["bash", "submit"])

    async def main() -> int:
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=trajectories)) as session:

            async def one() -> int:
                messages: list[Any] = [{"role": "system", "content": "x" * 500}, {"role": "user", "content": PROBLEM}]
                for _ in range(turns):
                    body = json.dumps({"model": "bench", "messages": messages, "tools": tools, "max_tokens": 64})
                    async with session.post(base_url + "/v1/chat/completions", data=body) as resp:
                        message = json.loads(await resp.read())["choices"][0]["message"]
                    messages.append(message)
                    call_id = message["tool_calls"][0]["id"]
                    messages.append({"role": "tool", "tool_call_id": call_id, "content": OBSERVATION_TEXT})
                return turns

            return sum(await asyncio.gather(*(one() for _ in range(trajectories))))

    cpu, wall = time.process_time(), time.perf_counter()
    n = asyncio.run(main())
    return {"round_trips": n, "cpu_s": time.process_time() - cpu, "wall_s": time.perf_counter() - wall}


MINI_SCRIPT = """
import json, sys, time, os
from concurrent.futures import ThreadPoolExecutor
os.environ.setdefault("MSWEA_SILENT_STARTUP", "1")
from minisweagent.models.litellm_model import LitellmModel
base_url, trajectories, turns = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
problem, observation = sys.argv[4], sys.argv[5]
model = LitellmModel(model_name="openai/bench", model_kwargs={"api_base": base_url + "/v1", "api_key": "none"},
                     cost_tracking="ignore_errors")
def one(_):
    # the way mini-swe-agent's DefaultAgent drives its model: query, then the tool results as messages
    messages = [{"role": "system", "content": "x" * 500}, {"role": "user", "content": problem}]
    for _ in range(turns):
        message = model.query(messages)
        messages.append(message)
        output = {"output": observation, "returncode": 0, "exception_info": ""}
        messages.extend(model.format_observation_messages(message, [output]))
    return turns
one(0)  # warm up (imports, litellm's first-call set-up)
cpu, wall = time.process_time(), time.perf_counter()
with ThreadPoolExecutor(trajectories) as pool:
    n = sum(pool.map(one, range(trajectories)))
print(json.dumps({"round_trips": n, "cpu_s": time.process_time() - cpu, "wall_s": time.perf_counter() - wall}))
"""


def ensure_mini_venv() -> Path:
    """benchmarks/.venv-mini with mini-swe-agent from PyPI (created once; git-ignored from inside)."""
    python = MINI_VENV / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(MINI_VENV)], check=True)
    (MINI_VENV / ".gitignore").write_text("*\n")
    probe = subprocess.run([str(python), "-c", "import minisweagent"], capture_output=True)
    if probe.returncode != 0:
        subprocess.run([str(python), "-m", "pip", "install", "-q", "mini-swe-agent"], check=True)
    return python


def bench_mini(base_url: str, trajectories: int, turns: int, core: int | None) -> dict[str, Any]:
    python = ensure_mini_venv()
    argv = [str(python), "-c", MINI_SCRIPT, base_url, str(trajectories), str(turns), PROBLEM, OBSERVATION_TEXT]
    proc = subprocess.run(argv, capture_output=True, text=True, preexec_fn=_pin(core))
    if proc.returncode != 0:
        raise RuntimeError(f"mini-swe-agent run failed: {proc.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def _pin(core: int | None) -> Any:
    return (lambda: os.sched_setaffinity(0, {core})) if core is not None else None


def report(name: str, r: dict[str, Any]) -> dict[str, Any]:
    r = {**r, "driver": name}
    r["round_trips_per_s"] = r["round_trips"] / r["wall_s"]
    r["round_trips_per_cpu_s"] = r["round_trips"] / r["cpu_s"]
    r["cpu_ms_per_round_trip"] = 1000 * r["cpu_s"] / r["round_trips"]
    print(
        f"{name:<9} {r['round_trips']:>7} round trips  wall {r['wall_s']:7.2f} s  cpu {r['cpu_s']:7.2f} s  "
        f"{r['round_trips_per_s']:8.0f}/s  {r['round_trips_per_cpu_s']:8.0f}/s per core  "
        f"{r['cpu_ms_per_round_trip']:6.3f} ms CPU each",
        flush=True,
    )
    return r


DRIVERS: dict[str, Any] = {
    "specqual": bench_specqual,
    "aiohttp": bench_aiohttp,
    "openai": bench_openai,
    "mini": None,  # runs in its own environment: bench_mini
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trajectories", type=int, default=256)
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--only", choices=list(DRIVERS), action="append")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--serve", help=argparse.SUPPRESS)
    parser.add_argument("--server-core", type=int, default=-1, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, None if args.server_core < 0 else args.server_core)
        return
    cores = sorted(os.sched_getaffinity(0))
    driver_core, server_core = (cores[0], cores[1]) if len(cores) > 1 else (None, None)
    server, base_url = start_server(server_core)
    results = []
    try:
        print(f"{args.trajectories} trajectories x {args.turns} turns, driver on core {driver_core}, "
              f"server on core {server_core}", flush=True)  # fmt: skip
        for name in args.only or list(DRIVERS):
            try:
                if name == "mini":
                    r = bench_mini(base_url, args.trajectories, args.turns, driver_core)
                else:
                    if driver_core is not None:
                        os.sched_setaffinity(0, {driver_core})
                    r = DRIVERS[name](base_url, args.trajectories, args.turns)
                results.append(report(name, r))
            except Exception as e:  # one failing comparison must not hide the others
                print(f"{name:<9} FAILED: {e}", flush=True)
                results.append({"driver": name, "error": str(e)})
    finally:
        server.terminate()
        server.wait(10)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    sys.path.insert(0, str(HERE.parent))
    main()
