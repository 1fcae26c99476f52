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


class SpecErrors(SpecError):
    """Several problems of the cohort files, all listed: `str()` is a count, then one line per problem."""

    def __init__(self, errors: list[SpecError]) -> None:
        first = errors[0]
        super().__init__(first.field, first.message, first.source)
        self.errors = errors

    def with_source(self, source: str) -> SpecErrors:
        return SpecErrors([e.with_source(source) for e in self.errors])

    def __str__(self) -> str:
        return f"{len(self.errors)} problems:\n" + "\n".join(f"  {e}" for e in self.errors)


def raise_all(errors: list[SpecError]) -> None:
    """Raise nothing, the one error, or all of them together (duplicates dropped, order kept)."""
    unique = list({str(e): e for e in errors}.values())
    if len(unique) == 1:
        raise unique[0]
    if unique:
        raise SpecErrors(unique)
