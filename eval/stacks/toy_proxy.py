"""A minimal prefill/decode proxy, following vLLM's documented disaggregation proxy flow.

For each completion request: send it to a prefill worker with `max_tokens=1` and `kv_transfer_params`
(`do_remote_decode: true`), take the `kv_transfer_params` the prefill worker answers with, and send the original
request with them to a decode worker, streaming its answer back. Stdlib HTTP server + httpx only, so it runs
under specqual's interpreter. Used where `vllm-router` is not wanted (router kind `toy-proxy`).

    python -m eval.stacks.toy_proxy --prefill http://127.0.0.1:8100 --decode http://127.0.0.1:8200 --port 8192
"""

from __future__ import annotations

import argparse
import itertools
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx

COMPLETION_PATHS = ("/v1/completions", "/v1/chat/completions")


def prefill_body(body: dict[str, Any]) -> dict[str, Any]:
    """The prefill leg: one token, no streaming, and a request for remote decode."""
    out = dict(body)
    out.update(stream=False, max_tokens=1)
    if "max_completion_tokens" in out:
        out["max_completion_tokens"] = 1
    out.pop("stream_options", None)
    out["kv_transfer_params"] = {
        "do_remote_decode": True,
        "do_remote_prefill": False,
        "remote_engine_id": None,
        "remote_block_ids": None,
        "remote_host": None,
        "remote_port": None,
    }
    return out


class Backends:
    def __init__(self, prefill: list[str], decode: list[str]) -> None:
        self.prefill, self.decode = prefill, decode
        self._p, self._d = itertools.cycle(prefill), itertools.cycle(decode)
        self._lock = threading.Lock()
        self.client = httpx.Client(timeout=httpx.Timeout(None, connect=10.0))

    def next(self) -> tuple[str, str]:
        with self._lock:
            return next(self._p), next(self._d)


class Handler(BaseHTTPRequestHandler):
    backends: Backends

    def log_message(self, format: str, *args: Any) -> None:  # one line per request on stderr
        super().log_message(format, *args)

    def _send(self, status: int, body: bytes, ctype: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        if self.path == "/health":
            self._send(200, b"{}")
            return
        r = self.backends.client.get(self.backends.decode[0] + self.path)
        self._send(r.status_code, r.content, r.headers.get("content-type", "application/json"))

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        prefill, decode = self.backends.next()
        if self.path not in COMPLETION_PATHS:
            r = self.backends.client.post(decode + self.path, content=raw, headers={"content-type": "application/json"})
            self._send(r.status_code, r.content, r.headers.get("content-type", "application/json"))
            return
        body = json.loads(raw or b"{}")
        first = self.backends.client.post(prefill + self.path, json=prefill_body(body))
        if first.status_code != 200:
            self._send(first.status_code, first.content)
            return
        body["kv_transfer_params"] = first.json().get("kv_transfer_params")
        with self.backends.client.stream("POST", decode + self.path, json=body) as r:
            self.send_response(r.status_code)
            self.send_header("Content-Type", r.headers.get("content-type", "application/json"))
            self.end_headers()  # HTTP/1.0: the body ends when the connection closes
            for chunk in r.iter_raw():
                self.wfile.write(chunk)
                self.wfile.flush()


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prefill", action="append", required=True, help="prefill worker URL (repeatable)")
    ap.add_argument("--decode", action="append", required=True, help="decode worker URL (repeatable)")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8192)
    args = ap.parse_args(argv)
    Handler.backends = Backends(args.prefill, args.decode)
    server = ThreadingHTTPServer((args.host, args.port), Handler)
    server.daemon_threads = True
    server.serve_forever()


if __name__ == "__main__":
    main()
