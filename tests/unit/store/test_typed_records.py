"""store's typed records: every field documented, typos refused, and the typed reads skip what is not a record."""

from __future__ import annotations

import importlib
import inspect
import json
from pathlib import Path

import pytest
from pydantic import BaseModel, ValidationError

from store.record_io import append_record, read_record, read_records, write_record
from store.stack_records import ServerEvent
from store.unit_records import GradeRecord, VerdictRecord

MODULES = ["records", "unit_records", "stack_records", "cache_records", "gpu_records", "report_records", "decisions"]
MODULES += ["canary_records"]
EXTENSIBLE = {"RunRecord", "MetricsSnapshot"}  # stages add fields a reader must keep


def record_classes() -> list[type[BaseModel]]:
    out = []
    for name in MODULES:
        module = importlib.import_module(f"store.{name}")
        out += [c for _, c in inspect.getmembers(module, inspect.isclass) if c.__module__ == module.__name__]
    return [c for c in out if issubclass(c, BaseModel)]


@pytest.mark.parametrize("cls", record_classes(), ids=lambda c: c.__name__)
def test_every_field_has_a_description_and_typos_are_refused(cls: type[BaseModel]) -> None:
    assert cls.__doc__, cls
    undocumented = [n for n, f in cls.model_fields.items() if not f.description]
    assert not undocumented, f"{cls.__name__}: {undocumented}"
    assert cls.model_config.get("extra") == ("allow" if cls.__name__ in EXTENSIBLE else "forbid")


def test_a_top_level_record_carries_its_schema_version() -> None:
    files = [c for c in record_classes() if c.__doc__ and c.__doc__.startswith("`")]  # those named by their file
    assert len(files) > 15
    missing = [c.__name__ for c in files if "schema_version" not in c.model_fields]
    assert not missing, missing


def verdict(**kw: object) -> VerdictRecord:
    fields = {"cohort": "c", "instance_id": "a__b-1", "repo": "a/b", "repeat": 0, "status": "completed"}
    return VerdictRecord.model_validate(fields | kw)


def test_typed_reads_return_none_for_what_is_not_the_record(tmp_path: Path) -> None:
    write_record(tmp_path / "verdict.json", verdict(seed=3))
    assert read_record(tmp_path / "verdict.json", VerdictRecord) == verdict(seed=3)
    assert read_record(tmp_path / "verdict.json", GradeRecord) is None  # another record
    assert read_record(tmp_path / "missing.json", VerdictRecord) is None
    (tmp_path / "torn.json").write_text('{"schema_version": 1, "cohort": "c"')
    assert read_record(tmp_path / "torn.json", VerdictRecord) is None
    with pytest.raises(ValidationError):
        verdict(status="maybe")
    written = json.loads((tmp_path / "verdict.json").read_text())
    assert "imported_from" not in verdict().record() and written["seed"] == 3


def test_read_records_skips_torn_and_foreign_lines(tmp_path: Path) -> None:
    path = tmp_path / "server_events.jsonl"
    event = ServerEvent(time="t", stack_id="s", event="died", process="server.0", deaths=1, restarts=0, max_restarts=3)
    append_record(path, event)
    with path.open("a") as f:
        f.write(json.dumps({"event": "died"}) + "\n" + '{"torn')
    assert read_records(path, ServerEvent) == [event]
