"""CLI subcommands grouped by stage; each module has `register(app)` and imports heavy things lazily."""

from __future__ import annotations

import importlib

import typer

# One module per stage; each adds its commands to the app.
COMMAND_MODULES = (
    "stack",
    "probe",
    "rollout",
    "grade",
    "classify",
    "report",
    "status",
    "bisect",
    "soak",
    "sampled",
    "repro",
)


def register_all(app: typer.Typer) -> None:
    for name in COMMAND_MODULES:
        importlib.import_module(f"eval.commands.{name}").register(app)
