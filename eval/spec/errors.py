"""The one error type of cohort-file loading: it names the file (or override) and the field."""

from __future__ import annotations


class SpecError(Exception):
    """A cohort file or override is invalid. `str()` is one line: `SOURCE: FIELD: MESSAGE`."""

    def __init__(self, field: str, message: str, source: str | None = None) -> None:
        super().__init__(message)
        self.field = field
        self.message = message
        self.source = source

    def with_source(self, source: str) -> SpecError:
        return SpecError(self.field, self.message, self.source or source)

    def __str__(self) -> str:
        parts = [p for p in (self.source, self.field) if p]
        return ": ".join([*parts, self.message])
