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


def test_the_canary_and_uptime_records_match_what_their_writers_write_today() -> None:
    """Until eval/canary and eval/uptime write through these classes, their dataclasses and the records agree."""
    import dataclasses

    from eval.canary.compare import CohortSummary, ModeSummary
    from eval.canary.records import ProbeRecord
    from eval.uptime.traffic import SoakCounts as SoakDataclass
    from store.canary_records import CanarySummary, ModeCounts, ProbeResult, SoakCounts

    pairs = [(ProbeRecord, ProbeResult), (CohortSummary, CanarySummary), (ModeSummary, ModeCounts)]
    for writer, record in [*pairs, (SoakDataclass, SoakCounts)]:
        written = {f.name for f in dataclasses.fields(writer)}
        assert written == set(record.model_fields) - {"schema_version"}, (writer, record)


def test_labels_record_writes_what_the_classifier_writes(tmp_path: Path) -> None:
    """LabelsRecord.record() is byte-for-byte the classifier's labels.json (the switch changes no file)."""
    import shutil

    from eval.classify.rundir import classify_run
    from store.unit_records import LabelsRecord

    src = Path(__file__).resolve().parents[3] / "results" / "examples" / "pr55178-synth"
    labelled = [p.parent for p in sorted(src.glob("*/units/*/r*/labels.json")) if json.loads(p.read_text())["turns"]]
    run = tmp_path / "run"
    run.mkdir()
    shutil.copy(src / "run.json", run / "run.json")
    for unit in labelled[:4]:
        cohort = unit.parents[2].name
        (run / cohort).mkdir(exist_ok=True)
        shutil.copy(src / cohort / "cohort.json", run / cohort / "cohort.json")
        shutil.copytree(unit, run / unit.relative_to(src), ignore=shutil.ignore_patterns("labels.json"))
    classify_run(run)
    written = [json.loads(p.read_text()) for p in sorted(run.rglob("labels.json"))]
    assert len(written) == 4 and all(w["turns"] for w in written)
    assert all(LabelsRecord.model_validate(w).record() == w for w in written)


def test_a_record_that_does_not_validate_is_skipped_with_a_note_never_silently(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "older" / "verdict.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"schema_version": 1, "cohort": "c"}))  # an older or hand-written record
    assert read_record(path, VerdictRecord) is None
    assert read_record(path, VerdictRecord) is None
    err = capsys.readouterr().err
    assert err.count(f"skipped {path}: not a valid VerdictRecord") == 1  # once per file and kind
    assert "instance_id" in err or "repo" in err  # names a missing field
    assert read_record(tmp_path / "missing.json", VerdictRecord) is None
    assert capsys.readouterr().err == ""  # a missing file is no news
