"""Open the sandbox a workload names (`sandbox.kind`) for one task, through the registry."""

from __future__ import annotations

from eval import registry
from eval.protocols import Sandbox, Task
from eval.spec.models import SandboxSpec


def open_sandbox(spec: SandboxSpec, task: Task) -> Sandbox:
    """A fresh sandbox for one unit (its own work tree or container); the caller closes it."""
    cls = registry.load(registry.SANDBOXES, spec.kind)
    sandbox: Sandbox = cls(task, cpus=spec.cpus, memory_gb=spec.memory_gb)
    return sandbox
