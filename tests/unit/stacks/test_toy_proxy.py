"""The toy P/D proxy's flow (prefill with max_tokens=1 and kv_transfer_params, then decode), against stub workers.

The two workers are test doubles (tiny HTTP servers that record requests): the real P/D path with vLLM runs
in tests/integration/stacks.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest

from eval.stacks.resources import free_port
from eval.stacks.toy_proxy import prefill_body


def _stub(role: str, seen: list[dict[str, Any]]) -> ThreadingHTTPServer:
    class H(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen.append({"role": role, "path": self.path, "body": body})
            reply = {"kv_transfer_params": {"remote_block_ids": [1, 2]}} if role == "prefill" else {"text": "ok"}
            data = json.dumps(reply).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            data = json.dumps({"data": [{"id": "m"}]}).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *a: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture
def proxy() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    seen: list[dict[str, Any]] = []
    p, d = _stub("prefill", seen), _stub("decode", seen)
    port = free_port()
    argv = [sys.executable, "-m", "eval.stacks.toy_proxy", "--port", str(port)]
    argv += ["--prefill", f"http://127.0.0.1:{p.server_port}", "--decode", f"http://127.0.0.1:{d.server_port}"]
    proc = subprocess.Popen(argv)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if httpx.get(url + "/health").status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.1)
    yield url, seen
    proc.terminate()
    proc.wait(10)
    p.shutdown()
    d.shutdown()


def test_prefill_body_asks_for_remote_decode() -> None:
    body = prefill_body({"model": "m", "max_tokens": 50, "stream": True, "stream_options": {"include_usage": True}})
    assert body["max_tokens"] == 1 and body["stream"] is False and "stream_options" not in body
    assert body["kv_transfer_params"]["do_remote_decode"] is True


def test_request_goes_to_prefill_then_decode_with_the_transfer_params(proxy: tuple[str, list[dict[str, Any]]]) -> None:
    url, seen = proxy
    r = httpx.post(url + "/v1/completions", json={"model": "m", "prompt": "hi", "max_tokens": 5})
    assert r.status_code == 200 and r.json() == {"text": "ok"}
    assert [s["role"] for s in seen] == ["prefill", "decode"]
    assert seen[0]["body"]["max_tokens"] == 1
    assert seen[1]["body"]["max_tokens"] == 5
    assert seen[1]["body"]["kv_transfer_params"] == {"remote_block_ids": [1, 2]}
    assert httpx.get(url + "/v1/models").json()["data"][0]["id"] == "m"
