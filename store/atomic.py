"""Atomic file writes and tolerant reads of the results directory.

A reader sees the old file or the whole new one, never a half-written one; an appended JSON line is one write, so
a reader sees whole lines only (a crashed writer may leave a torn last line, which the readers skip).
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any


class StoreError(Exception):
    """The results directory cannot be written (disk full, permissions): nothing half-written is left."""


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write to a temp file in the same directory, fsync, rename over `path`, fsync the directory."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as e:
        raise StoreError(f"cannot write {path}: {e.strerror or e}") from e
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as e:
        Path(tmp).unlink(missing_ok=True)
        raise StoreError(f"cannot write {path}: {e.strerror or e}") from e
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: Path, obj: Any) -> None:
    atomic_write_text(path, json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


def append_line(path: Path, record: Any) -> None:
    """Append one JSON line with a single write (O_APPEND) and fsync: readers never see half a record."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = (json.dumps(record, sort_keys=True) + "\n").encode()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def read_json(path: Path) -> Any | None:
    """The parsed file, or None when it is missing or unreadable (a unit without it is not done)."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def read_json_object(path: Path) -> dict[str, Any] | None:
    """The parsed file when it holds a JSON object, else None (missing, unreadable, or another JSON value)."""
    data = read_json(path)
    return data if isinstance(data, dict) else None


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Lines that parse as JSON objects; a torn last line (a crashed writer) is skipped; [] for a missing file."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    out = []
    for line in lines:
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if isinstance(row, dict):
            out.append(row)
    return out


def sweep_temp_files(root: Path) -> int:
    """Remove temp files that a killed writer left behind (their targets were never replaced)."""
    removed = 0
    if Path(root).is_dir():
        for tmp in Path(root).rglob(".*.tmp"):
            tmp.unlink(missing_ok=True)
            removed += 1
    return removed
