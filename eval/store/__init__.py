"""The pipeline's writer of a run directory (`open_run`, `RunDir`). The contract itself (layout, typed records,
instance order, acceptance, atomic I/O) is the top-level `store` package, which analysis imports too."""

from eval.store.atomic import StoreError, atomic_write_json, atomic_write_text, read_json
from eval.store.run import SCHEMA_VERSION, RunDir, open_run

__all__ = [
    "SCHEMA_VERSION",
    "RunDir",
    "StoreError",
    "atomic_write_json",
    "atomic_write_text",
    "open_run",
    "read_json",
]
