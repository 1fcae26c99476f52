"""Loaders: a results directory -> tidy pandas DataFrames at fixed grains (see `analysis.columns`).

    run = load_run("results/my-run")
    run.units      # cohort x instance x repeat
    run.turns      # one row per model response (read lazily: trajectories are the bulk of a run)
    run.probes     # canary probes
    run.metrics    # /metrics snapshots
    run.cohorts    # one row per cohort: factors, control, policy, provenance

Only the results directory is read; nothing here knows the pipeline.
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import Any

import pandas as pd
from pydantic import BaseModel

from analysis import columns as C
from store.atomic import read_json_object as read_json
from store.layout import COHORT_JSON, GRADE, LABELS, METRICS, STACK_JSON, TRAJECTORY, VERDICT
from store.record_io import read_record, read_records
from store.records import CohortRecord, MetricsSnapshot
from store.stack_records import StackRecord
from store.unit_records import GradeRecord, LabelsRecord, TrajectoryLine, VerdictRecord


class NotARunError(ValueError):
    """The directory has no readable run.json."""


def _row(cols: list[C.Column], files: dict[str, dict[str, Any] | None]) -> dict[str, Any]:
    return {c.name: C.pick(files.get(c.file), c.path) for c in cols if c.source != "derived" and "[]" not in c.source}


class RunData:
    """One run directory, its tables built on first use."""

    def __init__(self, path: Path | str):
        self.path = Path(path)
        meta = read_json(self.path / "run.json")
        if meta is None:
            raise NotARunError(f"{self.path} is not a specqual run directory (no readable run.json)")
        self.meta = meta

    @property
    def cohort_names(self) -> list[str]:
        """Cohorts in matrix order (run.json), then any other cohort directory found on disk."""
        listed = [str(c) for c in self.meta.get("cohorts") or []]
        found = sorted(p.parent.name for p in self.path.glob("*/cohort.json"))
        return [c for c in listed if (self.path / c / "cohort.json").exists()] + [c for c in found if c not in listed]

    @cached_property
    def runs(self) -> pd.DataFrame:
        return pd.DataFrame([_row(C.RUNS, {"run.json": self.meta})], columns=C.names(C.RUNS))

    @cached_property
    def cohorts(self) -> pd.DataFrame:
        rows = []
        for name in self.cohort_names:
            cohort = read_record(self.path / name / COHORT_JSON, CohortRecord)
            files = {COHORT_JSON: _dumped(cohort), STACK_JSON: _dumped(self._stack(name))}
            row = _row(C.COHORTS, files)
            row["cohort"] = row["cohort"] or name
            rows.append(row)
        return pd.DataFrame(rows, columns=C.names(C.COHORTS), dtype=object)

    def _stack(self, cohort: str) -> StackRecord | None:
        """stack.json, or the latest stack-<n>.json of a relaunched stack, or None when not recorded."""
        cdir = self.path / cohort
        relaunched = sorted(cdir.glob("stack-*.json"), key=lambda p: p.stem)
        return read_record(relaunched[-1] if relaunched else cdir / STACK_JSON, StackRecord)

    def cohort_meta(self, cohort: str) -> CohortRecord:
        """cohort.json, or a record that knows only the name (missing or unreadable)."""
        found = read_record(self.path / cohort / COHORT_JSON, CohortRecord)
        if found is not None:
            return found
        return CohortRecord(
            name=cohort, label=cohort, factors={}, factor_labels={}, columns={}, control=None, policy=None,
            speculative_config=None, build=None, topology=None, tool_call_parser=None, gpus=None, commands=[],
        )  # fmt: skip

    def unit_dirs(self, cohort: str) -> list[Path]:
        return sorted(p.parent for p in (self.path / cohort / "units").glob("*/r*/verdict.json"))

    @cached_property
    def units(self) -> pd.DataFrame:
        rows = []
        for cohort in self.cohort_names:
            for udir in self.unit_dirs(cohort):
                rows.append(self._unit_row(cohort, udir))
        cols = ["cohort", *C.names(C.UNITS)]
        frame = pd.DataFrame(rows, columns=cols)
        return frame.astype({"repeat": "Int64", "turns": "Int64"}) if len(frame) else frame

    def _unit_row(self, cohort: str, udir: Path) -> dict[str, Any]:
        typed: dict[str, type[BaseModel]] = {VERDICT: VerdictRecord, GRADE: GradeRecord, LABELS: LabelsRecord}
        files = {name: _dumped(read_record(udir / name, cls)) for name, cls in typed.items()}
        row = {"cohort": cohort, **_row(C.UNITS, files)}
        row["instance_id"] = row["instance_id"] or udir.parent.name
        row["unit_dir"] = str(udir.relative_to(self.path))
        row["classified"] = files["labels.json"] is not None
        row["labels"] = row["labels"] or {}
        row["infra"] = row["rollout_status"] == "infra_error" or row["grade_status"] == "infra_error"
        if row["infra"]:
            row["resolved"] = None
            row["outcome"] = "infra"
        elif row["resolved"] is None:
            row["outcome"] = "ungraded"
        else:
            row["outcome"] = "resolved" if row["resolved"] else "unresolved"
        return row

    @cached_property
    def turns(self) -> pd.DataFrame:
        rows = []
        for unit in self.units.itertuples():
            rows.extend(self.unit_turns(str(unit.cohort), self.path / str(unit.unit_dir), str(unit.instance_id)))
        return pd.DataFrame(rows, columns=["cohort", "instance_id", "repeat", *C.names(C.TURNS)])

    def unit_turns(self, cohort: str, udir: Path, instance_id: str | None = None) -> list[dict[str, Any]]:
        """The turn rows of one unit, with the labels and evidence of labels.json joined on `turn`."""
        labels = read_record(udir / LABELS, LabelsRecord)
        by_turn = {t.turn: t for t in labels.turns} if labels is not None else {}
        rows = []
        for rec in read_records(udir / TRAJECTORY, TrajectoryLine):
            row: dict[str, Any] = {"cohort": cohort, "instance_id": instance_id or udir.parent.name}
            row["repeat"] = _repeat(udir)
            row.update(_row(C.TURNS, {TRAJECTORY: rec.model_dump(mode="json")}))
            lab = by_turn.get(rec.turn)
            row["labels"] = list(lab.labels) if lab else []
            row["evidence"] = [e.model_dump(mode="json", exclude_none=True) for e in lab.evidence] if lab else []
            rows.append(row)
        return rows

    @cached_property
    def probes(self) -> pd.DataFrame:
        rows = []
        for cohort in self.cohort_names:
            for p in sorted((self.path / cohort / "probes").glob("*.json")):
                rec = read_json(p)
                if rec is not None:
                    rows.append({"cohort": cohort, **_row(C.PROBES, {"probe": rec})})
        return pd.DataFrame(rows, columns=["cohort", *C.names(C.PROBES)])

    @cached_property
    def metrics(self) -> pd.DataFrame:
        rows = []
        for cohort in self.cohort_names:
            for rec in read_records(self.path / cohort / METRICS, MetricsSnapshot):
                rows.append({"cohort": cohort, **_row(C.METRICS, {METRICS: rec.model_dump(mode="json")})})
        return pd.DataFrame(rows, columns=["cohort", *C.names(C.METRICS)])


def _dumped(record: BaseModel | None) -> dict[str, Any] | None:
    """A typed record as the column table reads it (analysis.columns picks by JSON path)."""
    return record.model_dump(mode="json") if record is not None else None


def _repeat(udir: Path) -> int | None:
    return int(udir.name[1:]) if udir.name[1:].isdigit() else None


def load_run(path: Path | str) -> RunData:
    """Open a run directory (raises NotARunError when it has no run.json)."""
    return RunData(path)
