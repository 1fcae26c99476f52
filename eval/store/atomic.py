"""The pipeline's name for store.atomic (atomic writes, tolerant reads): one implementation, in `store`."""

from store.atomic import (
    StoreError,
    append_line,
    atomic_write_bytes,
    atomic_write_json,
    atomic_write_text,
    read_json,
    read_json_object,
    read_jsonl,
    sweep_temp_files,
)

__all__ = [
    "StoreError",
    "append_line",
    "atomic_write_bytes",
    "atomic_write_json",
    "atomic_write_text",
    "read_json",
    "read_json_object",
    "read_jsonl",
    "sweep_temp_files",
]
