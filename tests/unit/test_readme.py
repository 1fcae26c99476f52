"""README.md's reference part is generated from docs/*.md: it must not go stale."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_readme_is_regenerated_from_docs() -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "merge_readme.py"), "--check"], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr


def test_readme_starts_with_setup_and_test_commands() -> None:
    quick = (ROOT / "README.md").read_text().split("## Quick start", 1)[1]
    commands = [line.split("#")[0].strip() for line in quick.split("```bash", 1)[1].split("```", 1)[0].splitlines()]
    assert [c for c in commands if c] == ["bash scripts/demo.sh", ".venv/bin/python -m pytest -q"]
