"""Typed reads and writes of the results directory: a record model in, a record model out (store.atomic underneath).

write_record(layout.unit_dir(c, i, 0) / VERDICT, VerdictRecord(...))
verdict = read_record(path, VerdictRecord)        # None: missing, unreadable, or not this record
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from store.atomic import append_line, atomic_write_json, read_json_object, read_jsonl

R = TypeVar("R", bound=BaseModel)


def dump(record: BaseModel) -> dict[str, object]:
    """The record as the JSON object it is written as."""
    return record.model_dump(mode="json")


def write_record(path: Path, record: BaseModel) -> None:
    """Write `record` atomically (store.atomic.atomic_write_json)."""
    atomic_write_json(path, dump(record))


def append_record(path: Path, record: BaseModel) -> None:
    """Append `record` as one JSON line in a single write (store.atomic.append_line)."""
    append_line(path, dump(record))


_WARNED: set[tuple[str, str]] = set()


def _skipped(where: str, cls: type[BaseModel], error: ValidationError) -> None:
    """Say once per file and record kind that a record was skipped, and why: a reader never drops data silently."""
    if (where, cls.__name__) in _WARNED:
        return
    _WARNED.add((where, cls.__name__))
    first = error.errors()[0]
    field = ".".join(str(p) for p in first.get("loc", ())) or "(record)"
    print(
        f"specqual: skipped {where}: not a valid {cls.__name__} ({error.error_count()} problem(s); "
        f"first: {field}: {first.get('msg', '')})",
        file=sys.stderr,
    )


def parse_record(data: object, cls: type[R], where: str | None = None) -> R | None:
    """`data` as a `cls`, or None when it is not one (a reader skips what it cannot trust; given `where`, it says
    so on stderr, once per file and kind)."""
    if not isinstance(data, dict):
        return None
    try:
        return cls.model_validate(data)
    except ValidationError as e:
        if where is not None:
            _skipped(where, cls, e)
        return None


def read_record(path: Path, cls: type[R]) -> R | None:
    """The file as a `cls`; None when it is missing or unreadable, and None with a note on stderr when it holds
    something that is not a valid `cls` (an older or foreign record)."""
    return parse_record(read_json_object(path), cls, str(path))


def read_records(path: Path, cls: type[R]) -> list[R]:
    """The JSON lines of `path` that are valid `cls` records (a torn or foreign line is skipped)."""
    out = []
    for row in read_jsonl(path):
        record = parse_record(row, cls, str(path))
        if record is not None:
            out.append(record)
    return out
