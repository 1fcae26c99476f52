"""The results directory: the contract between the pipeline and analysis (see results/README.md)."""

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
