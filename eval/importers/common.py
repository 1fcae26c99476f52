"""Write other agents' trajectories as specqual unit directories (results/README.md), so that `specqual
classify` and `specqual report` work on them: trajectory.jsonl (one line per model response), patch.diff,
verdict.json last. Each importer turns its format into `ImportedUnit`s; this module does the rest.
"""

from __future__ import annotations

import json
import platform
import socket
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from eval.store.atomic import atomic_write_json, atomic_write_text
from eval.store.run import RunDir, now, versions
from store.layout import PATCH, TRAJECTORY, VERDICT
from store.records import CohortRecord, RunRecord
from store.unit_records import TrajectoryLine, VerdictRecord


class ImporterError(Exception):
    """The source cannot be imported (names the file and what is wrong)."""


@dataclass
class ImportedUnit:
    instance_id: str
    lines: list[TrajectoryLine]
    patch: str
    exit_reason: str | None
    status: str = "completed"
    infra_reason: str | None = None
    wall_s: float | None = None
    source: str = ""
    tools: list[str] = field(default_factory=list)

    @property
    def repo(self) -> str:
        """`owner/name` from a SWE-bench id such as `django__django-11099`."""
        owner, _, rest = self.instance_id.partition("__")
        return f"{owner}/{rest.rsplit('-', 1)[0]}" if rest else self.instance_id


@dataclass
class ImportSummary:
    units: int = 0


def trajectory_line(turn: int, **fields: Any) -> TrajectoryLine:
    """A trajectory.jsonl line with every field of the contract (missing ones null)."""
    try:
        return TrajectoryLine(turn=turn, **fields)
    except ValidationError as e:
        raise ImporterError(f"turn {turn} does not fit a trajectory line: {e}") from e


def usage_totals(lines: list[TrajectoryLine]) -> tuple[int, int]:
    prompt = completion = 0
    for line in lines:
        usage = line.usage or {}
        prompt += int(usage.get("prompt_tokens") or 0)
        completion += int(usage.get("completion_tokens") or 0)
    return prompt, completion


def write_unit(run: RunDir, cohort: str, unit: ImportedUnit, repeat: int) -> Path:
    from eval.rollout.unit import patch_stats, reset_dir

    directory = run.unit_dir(cohort, unit.instance_id, repeat)
    reset_dir(directory)
    text = "".join(json.dumps(line.model_dump(mode="json"), ensure_ascii=False) + "\n" for line in unit.lines)
    atomic_write_text(directory / TRAJECTORY, text)
    atomic_write_text(directory / PATCH, unit.patch)
    prompt, completion = usage_totals(unit.lines)
    verdict = VerdictRecord(
        cohort=cohort,
        instance_id=unit.instance_id,
        repo=unit.repo,
        repeat=repeat,
        status="completed" if unit.status == "completed" else "infra_error",
        infra_reason=unit.infra_reason,
        exit_reason=unit.exit_reason,
        turns=len(unit.lines),
        prompt_tokens=prompt,
        completion_tokens=completion,
        wall_s=unit.wall_s,
        **patch_stats(unit.patch),
        attempts=1,
        seed=None,
        imported_from=unit.source,
    )
    atomic_write_json(directory / VERDICT, verdict.record())
    return directory


def agent_block(tools: list[str]) -> dict[str, Any]:
    """The part of run.json's `spec` that `specqual classify` reads: the tool names the agent offered."""
    return {"workloads": {"swebench": {"agent": {"tools": tools}}}}


def ensure_run(run: RunDir, cohort: str, fmt: str, src: Path, tool_format: str | None, tools: list[str]) -> None:
    """A minimal run.json and cohort.json for an imported run, unless they exist. The offered tools are kept per
    run (classify reads them from run.json), so a run holding several imports gets the union of their tools."""
    if run.run_json.exists():
        meta = run.meta()
        old = (((meta.get("spec") or {}).get("workloads") or {}).get("swebench") or {}).get("agent") or {}
        union = list(dict.fromkeys([*old.get("tools", []), *tools]))
        run.mark(cohorts=list(dict.fromkeys([*meta.get("cohorts", []), cohort])), spec=agent_block(union))
    else:
        record = RunRecord(
            run_id=run.path.name, name=run.path.name, spec_hash=None, spec=agent_block(tools), sources=[str(src)],
            base_dir=str(src.parent), cohorts=[cohort], columns={}, versions=versions(),
            host={"name": socket.gethostname(), "platform": platform.platform()}, argv=sys.argv,
            started_at=now(), ended_at=now(), imported_from=fmt,
        )  # fmt: skip
        atomic_write_json(run.run_json, record.model_dump(mode="json"))
    cohort_json = run.cohort_json(cohort)
    if not cohort_json.exists():
        cohort_record = CohortRecord(
            name=cohort, label=cohort, factors={}, factor_labels={}, columns={}, control=None, policy=None,
            speculative_config=None, build=None, topology=None, tool_call_parser=tool_format, gpus=None,
            commands=[], imported_from=fmt,
        )  # fmt: skip
        atomic_write_json(cohort_json, cohort_record.record())


def read_units(fmt: str, src: Path) -> Iterator[ImportedUnit]:
    if fmt == "mini-swe-agent":
        from eval.importers.mini_swe_agent import read

        return read(src)
    if fmt == "openhands":
        from eval.importers.openhands import read as read_openhands

        return read_openhands(src)
    raise ImporterError(f"unknown format {fmt!r} (known: mini-swe-agent, openhands)")


def import_units(
    fmt: str, src: Path, run_dir: Path, cohort: str, tool_format: str | None = None, first_repeat: int = 0
) -> ImportSummary:
    """Import every trajectory under `src`; an instance seen again gets the next repeat number."""
    run = RunDir(Path(run_dir))
    summary = ImportSummary()
    seen: dict[str, int] = {}
    units = list(read_units(fmt, src))
    if not units:
        raise ImporterError(f"{src}: no {fmt} trajectories found")
    tools = list(dict.fromkeys(name for unit in units for name in unit.tools))
    ensure_run(run, cohort, fmt, src, tool_format, tools)
    for unit in units:
        repeat = first_repeat + seen.get(unit.instance_id, 0)
        seen[unit.instance_id] = seen.get(unit.instance_id, 0) + 1
        write_unit(run, cohort, unit, repeat)
        summary.units += 1
    from eval.rollout.predictions import write_predictions

    write_predictions(run, cohort)
    return summary
