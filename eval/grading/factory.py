"""Make the grader a workload names (`grader.kind`), through the registry."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from eval import registry
from eval.protocols import Grader
from eval.spec.models import GraderSpec


def make_grader(spec: GraderSpec, log_root: Path | None = None, **options: Any) -> Grader:
    """`local` takes no log root (its logs go to each unit); `docker`/`modal` put the harness's logs there."""
    cls = registry.load(registry.GRADERS, spec.kind)
    if spec.kind != "local":
        options["log_root"] = log_root
    grader: Grader = cls(timeout_s=spec.timeout_s, **options)
    return grader
