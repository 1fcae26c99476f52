"""Plain dict registries: names used in cohort files -> import paths, imported only when used.

This module imports nothing of specqual: the cohort-file loader checks names against it (`eval.spec.load`), and
the stages load what a name points at.
"""

from __future__ import annotations

import importlib
from typing import Any

# Where stacks and rollouts run (see eval.executors).
EXECUTORS: dict[str, str] = {
    "local": "eval.executors.local:LocalExecutor",
    "slurm": "eval.executors.slurm:SlurmExecutor",
}

# Agents that drive SWE-bench style units (see eval.agent).
AGENTS: dict[str, str] = {
    "toolcall": "eval.agent.toolcall:ToolCallAgent",
    "gold": "eval.agent.controls:GoldAgent",
    "empty": "eval.agent.controls:EmptyAgent",
}

# Generators of models that specqual makes itself, without downloads (see eval.models).
MODEL_GENERATORS: dict[str, str] = {
    "tiny-nemotron-h": "eval.models.tiny_nemotron_h:generate",
    "tiny-llama": "eval.models.tiny_llama:generate",
    "smollm2-135m": "eval.models.smollm2:generate",
    "organism": "eval.models.organism:generate",
}

# Sandboxes for agent commands and local grading (see eval.sandbox).
SANDBOXES: dict[str, str] = {
    "bwrap": "eval.sandbox.bwrap:BwrapSandbox",
    "docker": "eval.sandbox.docker:DockerSandbox",
}

# Graders (see eval.grading).
GRADERS: dict[str, str] = {
    "local": "eval.grading.local:LocalGrader",
    "docker": "eval.grading.docker:DockerGrader",
    "modal": "eval.grading.docker:ModalGrader",
}


def unknown(registry: dict[str, str], name: str) -> str | None:
    """The message for a name that is not registered (naming the known ones), or None when it is."""
    if name in registry:
        return None
    return f"unknown name {name!r} (known: {', '.join(sorted(registry))})"


def load(registry: dict[str, str], name: str) -> Any:
    """Import and return the object registered under `name` (LookupError naming the known names otherwise)."""
    if (why := unknown(registry, name)) is not None:
        raise LookupError(why)
    module, _, attr = registry[name].partition(":")
    return getattr(importlib.import_module(module), attr)
