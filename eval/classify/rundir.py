"""`specqual classify RUN_DIR`: re-derive labels.json for every unit of a run from its saved trajectory.

Reads `<run>/<cohort>/cohort.json` (the tool-call parser), `run.json` (the agent's tools) and each unit's
trajectory.jsonl; writes only `labels.json` next to them, atomically. Grades and verdicts are never touched.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eval.classify.context import Context
from eval.classify.model import DEFAULT_TOOLS, ToolSpec
from eval.classify.trajectory import classify_trajectory
from eval.store.atomic import atomic_write_json, read_json


@dataclass
class RunSummary:
    units: int = 0
    corrupted: int = 0
    unreadable_lines: int = 0
    per_cohort: dict[str, tuple[int, int]] = field(default_factory=dict)  # cohort -> (units, corrupted)


def read_trajectory(path: Path) -> tuple[list[Any], int]:
    """The records of a trajectory.jsonl and the number of lines that are not JSON (a damaged artifact)."""
    records: list[Any] = []
    bad = 0
    try:
        with path.open("r", encoding="utf-8", errors="surrogateescape") as f:
            lines = f.read().split("\n")  # not splitlines(): U+2028 may sit inside a JSON string
    except OSError:
        return [], 1  # unreadable: labelled as a trajectory without turns, and reported
    for line in lines:
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except (ValueError, RecursionError):
            bad += 1
    return records, bad


def agent_tools(run_json: Any) -> list[ToolSpec] | None:
    """The tools the run's agent offered (names from run.json; schemas of the standard tools), or None."""
    try:
        names = run_json["spec"]["workloads"]["swebench"]["agent"]["tools"]
    except (KeyError, TypeError):
        return None
    if not isinstance(names, list):
        return None
    standard = {t.name: t for t in DEFAULT_TOOLS}
    return [standard.get(str(n), ToolSpec(str(n))) for n in names]


def cohort_dirs(run_dir: Path) -> Iterator[tuple[Path, dict[str, Any]]]:
    for path in sorted(run_dir.iterdir()):
        meta = read_json(path / "cohort.json") if path.is_dir() else None
        if isinstance(meta, dict):
            yield path, meta


def classify_run(run_dir: Path, tokenizer: Any = None, tool_format: str | None = None) -> RunSummary:
    """Write labels.json for every unit with a trajectory; `tool_format` overrides the cohort's parser."""
    summary = RunSummary()
    tools = agent_tools(read_json(run_dir / "run.json"))
    for cohort_path, meta in cohort_dirs(run_dir):
        parser = tool_format or meta.get("tool_call_parser")
        units = corrupted = 0
        for trajectory in sorted(cohort_path.glob("units/*/r*/trajectory.jsonl")):
            records, bad = read_trajectory(trajectory)
            ctx = Context.build(parser if isinstance(parser, str) else None, tools, tokenizer=tokenizer)
            result = classify_trajectory(records, ctx).record()
            atomic_write_json(trajectory.parent / "labels.json", result.record())
            units += 1
            corrupted += result.corrupted
            summary.unreadable_lines += bad
        summary.per_cohort[cohort_path.name] = (units, corrupted)
        summary.units += units
        summary.corrupted += corrupted
    return summary
