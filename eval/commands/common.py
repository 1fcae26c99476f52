"""Shared pieces of the CLI commands: config arguments, cohort loading, one-line errors with exit 2."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Annotated, Any, TypeVar

import typer

ConfigArg = Annotated[list[str], typer.Argument(help="cohort file(s), then optional key.path=value overrides")]
ConfigOpt = Annotated[
    list[str] | None, typer.Option("-c", "--config", help="more cohort files or key.path=value overrides")
]
F = TypeVar("F", bound=Callable[..., Any])


def fail(message: str, code: int = 2) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def spec_errors(fn: F) -> F:
    """Turn SpecError / StoreError into one line on stderr and exit code 2."""

    @wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from eval.spec.errors import SpecError
        from eval.store.atomic import StoreError

        try:
            return fn(*args, **kwargs)
        except SpecError as e:
            fail(str(e))
        except StoreError as e:
            fail(str(e), 3)

    return wrapper  # type: ignore[return-value]


def load(files: list[str], extra: list[str] | None) -> Any:
    from eval.spec.load import load_spec

    return load_spec([*files, *(extra or [])])
