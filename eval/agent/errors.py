"""Why a unit or a request stopped: infrastructure (retried, never graded) versus the model's own context limit."""

from __future__ import annotations


class InfraError(Exception):
    """The server or the sandbox failed (after retries): the unit is recorded as `infra_error`, never unresolved."""


class ContextLengthError(Exception):
    """The server refused the request because the conversation no longer fits: an agent exit, not infra."""
