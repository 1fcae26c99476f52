"""Shared unit-test fixtures: a minimal valid cohort file, as a dict, that tests mutate one thing at a time."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

MINIMAL: dict[str, Any] = {
    "name": "mini",
    "model": {"path": "/models/m", "tool_call_parser": "hermes"},
    "builds": {
        "unpatched": {"pip": "vllm==0.32.0", "patches": [{"file": "fix.patch", "reverse": True}]},
        "patched": {"pip": "vllm==0.32.0"},
    },
    "speculative": {"off": {"method": None}, "mtp5": {"method": "mtp", "num_speculative_tokens": 5}},
    "workloads": {"swebench": {"repeats": 3}},
    "comparisons": [{"cohort": "patched-mtp5", "control": "patched-off"}],
}


@pytest.fixture
def write_spec(tmp_path: Path):
    """Write a cohort file (MINIMAL deep-copied and changed by `edit`) next to a patch file; return its path."""
    (tmp_path / "fix.patch").write_text("--- a/x\n+++ b/x\n")

    def _write(edit=None, name: str = "c.yaml", raw: str | None = None) -> Path:
        path = tmp_path / name
        if raw is not None:
            path.write_text(raw)
            return path
        data = copy.deepcopy(MINIMAL)
        if edit is not None:
            edit(data)
        path.write_text(yaml.safe_dump(data, sort_keys=False))
        return path

    return _write
