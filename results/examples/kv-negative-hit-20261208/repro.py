"""vLLM 0.32.0, ExampleConnector + prefix caching: a prompt of 64k+1 tokens that the local prefix cache holds
up to 64k gets a negative connector hit count, and the API server's output handler dies on it.

ExampleConnector.get_num_new_matched_tokens returns align_to_block_size(len(prompt) - 1) - num_computed_tokens,
and align_to_block_size(n) is (n - 1) // block_size * block_size: for len(prompt) = 64k + 1 that is 64(k - 1),
one block short of the local hit 64k, so the connector reports -64 "new" tokens whenever its storage holds the
folder of the prompt's first 64(k - 1) tokens (k = 1: the empty prefix, which any prompt of at most 64 tokens
creates). The scheduler takes it as num_external_computed_tokens and records it as a connector prefix-cache hit;
the Prometheus logger's Counter.inc(-64) raises ValueError in AsyncLLM.output_handler: every request in flight
and every later one fails (HTTP 500).

Usage: python repro.py http://127.0.0.1:PORT [MODEL]   (exits 1 when the bug shows)
Server (block size 64): --enable-prefix-caching --block-size 64
  --kv-transfer-config '{"kv_connector":"ExampleConnector","kv_role":"kv_both",
                         "kv_connector_extra_config":{"shared_storage_path":"/tmp/kv-repro"}}'
  (speculative decoding is not needed; the fuzz run that found it had self-drafting K=4)
"""

from __future__ import annotations

import sys

import httpx


def main() -> int:
    url, model = sys.argv[1].rstrip("/"), (sys.argv[2] if len(sys.argv) > 2 else "tiny-llama")
    short = [100 + i for i in range(30)]  # saved under the folder of its first 0 aligned tokens
    p65 = [50 + (7 * i) % 400 for i in range(65)]  # 64 + 1 tokens
    failed = False
    for name, ids in (("short", short), ("p65 first", p65), ("p65 again", p65), ("short again", short)):
        body = {"model": model, "prompt": ids, "max_tokens": 4, "temperature": 0.0}
        try:
            r = httpx.post(url + "/v1/completions", json=body, timeout=120)
            ok = r.status_code == 200 and r.json()["choices"][0].get("finish_reason") in ("length", "stop")
            print(f"{name}: HTTP {r.status_code} {r.text[:160]}")
        except httpx.HTTPError as e:
            ok = False
            print(f"{name}: {type(e).__name__}: {e}")
        failed |= not ok
    print("BUG: a request failed" if failed else "no failure")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
