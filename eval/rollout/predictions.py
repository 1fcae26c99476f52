"""The cohort's SWE-bench predictions files, rebuilt from the unit directories (never appended under a lock).

`predictions.jsonl` holds one line per completed unit: the harness's three fields (`instance_id`,
`model_name_or_path`, `model_patch`) plus `repeat`. Because the harness keys predictions by instance id, each
repeat also gets its own file, `predictions.r<k>.jsonl`, that the harness can read as is. Units that ended in
an infra failure are left out: their patches are not the model's answer and are never graded as unresolved.
"""

from __future__ import annotations

import json
from pathlib import Path

from eval.store.atomic import atomic_write_text
from eval.store.run import RunDir
from store.layout import SCHEMA_VERSION, VERDICT
from store.record_io import read_record
from store.unit_records import VerdictRecord


def completed_units(cohort_dir: Path) -> list[tuple[VerdictRecord, Path]]:
    """(verdict, unit dir) of every completed unit, sorted by (repeat, instance_id)."""
    out = []
    for verdict_path in sorted((cohort_dir / "units").glob(f"*/r*/{VERDICT}")):
        verdict = read_record(verdict_path, VerdictRecord)
        if verdict is not None and verdict.schema_version == SCHEMA_VERSION and verdict.status == "completed":
            out.append((verdict, verdict_path.parent))
    out.sort(key=lambda item: (item[0].repeat, item[0].instance_id))
    return out


def write_predictions(run: RunDir, cohort: str, model_name: str | None = None) -> Path:
    """Rewrite `<run>/<cohort>/predictions.jsonl` (and per-repeat files) atomically from the unit dirs."""
    cohort_dir = run.cohort_dir(cohort)
    name = model_name or cohort
    lines: dict[int | None, list[str]] = {None: []}
    for verdict, unit_dir in completed_units(cohort_dir):
        patch_path = unit_dir / "patch.diff"
        patch = patch_path.read_text(encoding="utf-8") if patch_path.exists() else ""
        record = {"instance_id": verdict.instance_id, "model_name_or_path": name, "model_patch": patch}
        repeat = verdict.repeat
        lines[None].append(json.dumps({**record, "repeat": repeat}, ensure_ascii=False))
        lines.setdefault(repeat, []).append(json.dumps(record, ensure_ascii=False))
    for key, rows in lines.items():
        target = "predictions.jsonl" if key is None else f"predictions.r{key}.jsonl"
        atomic_write_text(cohort_dir / target, "".join(row + "\n" for row in rows))
    return cohort_dir / "predictions.jsonl"
