"""Provenance of a launch (`<run>/<cohort>/stack.json`): what code ran, how it was started, on what hardware.

Schema: results/README.md, "stack.json (provenance)". Secrets never land here: variables whose names look
like credentials are left out of `env`.
"""

from __future__ import annotations

import re
import shutil
import socket
import subprocess
from pathlib import Path

from eval.secrets import is_secret_name
from store.stack_records import Gpu

SCHEMA_VERSION = 1
# Variables from the parent environment that can change what a server does (kept in `env`).
_RELEVANT = re.compile(r"^(VLLM_|CUDA_|NCCL_|UCX_|NIXL_|OMP_|MKL_|TORCH|PYTORCH_|HF_|TRANSFORMERS_|PYTHON|LD_)")


def safe_env(env: dict[str, str]) -> dict[str, str]:
    """The variables worth recording, without anything that looks like a credential."""
    return {k: v for k, v in sorted(env.items()) if _RELEVANT.match(k) and not is_secret_name(k)}


def strip_secrets(env: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in sorted(env.items()) if not is_secret_name(k)}


def gpu_inventory() -> list[Gpu]:
    """The GPUs nvidia-smi lists (name, driver, memory), or [] where there is none."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return []
    query = "--query-gpu=name,driver_version,memory.total"
    try:
        out = subprocess.run([exe, query, "--format=csv,noheader,nounits"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return []
    gpus = []
    for line in out.stdout.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) == 3:
            mem = int(parts[2]) if parts[2].isdigit() else None
            gpus.append(Gpu(name=parts[0], driver=parts[1], memory_mib=mem))
    return gpus


def host_name() -> str:
    return socket.gethostname()


def stack_json_path(cohort_dir: Path) -> Path:
    """`stack.json` for the first launch of a cohort, `stack-<n>.json` for relaunches."""
    first = cohort_dir / "stack.json"
    if not first.exists():
        return first
    n = 1
    while (cohort_dir / f"stack-{n}.json").exists():
        n += 1
    return cohort_dir / f"stack-{n}.json"
