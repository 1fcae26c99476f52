"""Shared pieces of the cohort-file model tree: the strict base block and the name type."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

SCHEMA_VERSION = 1
NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]*$"
Name = Annotated[str, Field(pattern=NAME_PATTERN, max_length=80)]
ScalarArg = str | int | float | bool | None
ServerArgValue = ScalarArg | list[ScalarArg] | dict[str, Any]


class Strict(BaseModel):
    """Base of every block: unknown keys are errors."""

    model_config = ConfigDict(extra="forbid", frozen=True)
