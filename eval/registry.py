"""Plain dict registries: names used in cohort files -> import paths, imported only when used."""

from __future__ import annotations

import importlib
from typing import Any

from eval.spec.errors import SpecError

# Agents that drive SWE-bench style units (see eval.agent).
AGENTS: dict[str, str] = {
    "toolcall": "eval.agent.toolcall:ToolCallAgent",
    "gold": "eval.agent.controls:GoldAgent",
    "empty": "eval.agent.controls:EmptyAgent",
}

# Generators of models that specqual makes itself, without downloads (see eval.models).
MODEL_GENERATORS: dict[str, str] = {
    "tiny-nemotron-h": "eval.models.tiny_nemotron_h:generate",
    "smollm2-135m": "eval.models.smollm2:generate",
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


def known(registry: dict[str, str], name: str, field: str, source: str | None = None) -> None:
    """Raise a SpecError naming the field and the known names when `name` is not registered."""
    if name not in registry:
        raise SpecError(field, f"unknown name {name!r} (known: {', '.join(sorted(registry))})", source)


def load(registry: dict[str, str], name: str) -> Any:
    """Import and return the object registered under `name`."""
    known(registry, name, "name")
    module, _, attr = registry[name].partition(":")
    return getattr(importlib.import_module(module), attr)
