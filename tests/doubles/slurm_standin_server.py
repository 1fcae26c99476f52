"""A stand-in for a vLLM server in Slurm tests (vLLM itself is tested in
tests/integration/slurm/test_vllm_slurm.py): it answers /health, /v1/models and /metrics on the given host and
port, or exits at once with `--fail`. /v1/models also says which secrets arrived (sha256 of `--api-key` and of
$HF_TOKEN), without showing them.

    python -m tests.doubles.slurm_standin_server --host 127.0.0.1 --port 8000 --name prefill.0
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--host", required=True)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--name", default="server")
    p.add_argument("--fail", action="store_true")
    p.add_argument("--api-key")
    ns = p.parse_args()
    model = {"id": ns.name} | {
        f"{name}_sha256": hashlib.sha256(value.encode()).hexdigest()
        for name, value in (("api_key", ns.api_key), ("hf_token", os.environ.get("HF_TOKEN")))
        if value
    }
    if ns.fail:
        print(f"stand-in {ns.name}: failing on purpose", file=sys.stderr)
        sys.exit(3)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = {"/health": {}, "/v1/models": {"data": [model]}}.get(self.path)
            if self.path == "/metrics":
                data = b"vllm:num_requests_running 0\n"
            elif body is None:
                self.send_error(404)
                return
            else:
                data = json.dumps(body).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    print(f"stand-in {ns.name} listening on {ns.host}:{ns.port}", flush=True)
    ThreadingHTTPServer((ns.host, ns.port), Handler).serve_forever()


if __name__ == "__main__":
    main()
