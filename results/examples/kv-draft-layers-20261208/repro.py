"""vLLM 0.32.0, ExampleConnector + a draft model (speculative decoding): a request whose drafter never runs saves only
the target's KV layers; a later request with the same prompt finds the folder, loads the draft model's layers too,
and the worker dies (FileNotFoundError), taking the engine with it.

A 2047-token prompt with max_tokens 1 at --max-model-len 2048 ends in its prefill step: the drafter does not run for
it, so ExampleConnector writes the folder of its first 1984 tokens with `model.layers.*` files and no
`draft_model.model.layers.*`. `_found_match_for_prompt` only checks that the folder exists.

Usage: python repro.py http://127.0.0.1:PORT [MODEL]   (exits 1 when the bug shows)
"""

from __future__ import annotations

import sys

import httpx


def main() -> int:
    url, model = sys.argv[1].rstrip("/"), (sys.argv[2] if len(sys.argv) > 2 else "tiny-llama")
    long = [50 + (11 * i) % 400 for i in range(2047)]
    failed = False
    for name, ids, n in (("long first", long, 1), ("long again", long, 1), ("short after", long[:40], 4)):
        body = {"model": model, "prompt": ids, "max_tokens": n, "temperature": 0.0}
        try:
            r = httpx.post(url + "/v1/completions", json=body, timeout=300)
            ok = r.status_code == 200
            print(f"{name}: HTTP {r.status_code} {r.text[:160]}")
        except httpx.HTTPError as e:
            ok = False
            print(f"{name}: {type(e).__name__}: {e}")
        failed |= not ok
    print("BUG: a request failed" if failed else "no failure")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
