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

from analysis import columns as C
from store.atomic import read_json_object as read_json
from store.atomic import read_jsonl


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
            files = {"cohort.json": read_json(self.path / name / "cohort.json"), "stack.json": self._stack(name)}
            row = _row(C.COHORTS, files)
            row["cohort"] = row["cohort"] or name
            rows.append(row)
        return pd.DataFrame(rows, columns=C.names(C.COHORTS), dtype=object)

    def _stack(self, cohort: str) -> dict[str, Any] | None:
        """stack.json, or the latest stack-<n>.json of a relaunched stack, or None when not recorded."""
        cdir = self.path / cohort
        relaunched = sorted(cdir.glob("stack-*.json"), key=lambda p: p.stem)
        return read_json(relaunched[-1]) if relaunched else read_json(cdir / "stack.json")

    def cohort_meta(self, cohort: str) -> dict[str, Any]:
        return read_json(self.path / cohort / "cohort.json") or {"name": cohort}

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
        files = {name: read_json(udir / name) for name in ("verdict.json", "grade.json", "labels.json")}
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
        labels = read_json(udir / "labels.json") or {}
        by_turn = {t.get("turn"): t for t in labels.get("turns") or [] if isinstance(t, dict)}
        rows = []
        for rec in read_jsonl(udir / "trajectory.jsonl"):
            row: dict[str, Any] = {"cohort": cohort, "instance_id": instance_id or udir.parent.name}
            row["repeat"] = _repeat(udir)
            row.update(_row(C.TURNS, {"trajectory.jsonl": rec}))
            lab = by_turn.get(rec.get("turn"), {})
            row["labels"] = list(lab.get("labels") or [])
            row["evidence"] = list(lab.get("evidence") or [])
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
            for rec in read_jsonl(self.path / cohort / "metrics.jsonl"):
                rows.append({"cohort": cohort, **_row(C.METRICS, {"metrics.jsonl": rec})})
        return pd.DataFrame(rows, columns=["cohort", *C.names(C.METRICS)])


def _repeat(udir: Path) -> int | None:
    return int(udir.name[1:]) if udir.name[1:].isdigit() else None


def load_run(path: Path | str) -> RunData:
    """Open a run directory (raises NotARunError when it has no run.json)."""
    return RunData(path)
