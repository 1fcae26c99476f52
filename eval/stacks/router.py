"""The P/D router process: `vllm-router` (Rust, from the package index) or specqual's toy proxy.

`vllm-router` is looked up next to the build's interpreter, next to specqual's interpreter, then on PATH; the
toy proxy (`eval.stacks.toy_proxy`) runs under specqual's own interpreter, which always has it.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from eval.stacks.builds import BuildEnv


class RouterNotFound(Exception):
    """The `vllm-router` executable is not installed anywhere the launcher looks."""


def find_vllm_router(build: BuildEnv | None) -> str:
    candidates = []
    if build is not None and build.python is not None:
        candidates.append(build.python.parent / "vllm-router")
    candidates.append(Path(sys.executable).parent / "vllm-router")
    for c in candidates:
        if c.is_file():
            return str(c)
    found = shutil.which("vllm-router")
    if found is None:
        raise RouterNotFound("vllm-router is not installed (pip install vllm-router), or use router kind toy-proxy")
    return found


def router_argv(argv: list[str], build: BuildEnv | None) -> list[str]:
    """Resolve the program of a rendered router command line."""
    if argv and argv[0] == "vllm-router":
        return [find_vllm_router(build), *argv[1:]]
    return argv
