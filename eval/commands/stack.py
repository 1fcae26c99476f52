"""CLI commands of the stack stage."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add this stage's commands to the app (filled in as the stage lands)."""
