"""The cohort's SWE-bench predictions files, rebuilt from the unit directories (never appended under a lock).

`predictions.jsonl` holds one line per completed unit: the harness's three fields (`instance_id`,
`model_name_or_path`, `model_patch`) plus `repeat`. Because the harness keys predictions by instance id, each
repeat also gets its own file, `predictions.r<k>.jsonl`, that the harness can read as is. Units that ended in
an infra failure are left out: their patches are not the model's answer and are never graded as unresolved.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from eval.store.atomic import atomic_write_text, read_json
from eval.store.run import SCHEMA_VERSION, RunDir


def completed_units(cohort_dir: Path) -> list[tuple[dict[str, Any], Path]]:
    """(verdict, unit dir) of every completed unit, sorted by (repeat, instance_id)."""
    out = []
    for verdict_path in sorted((cohort_dir / "units").glob("*/r*/verdict.json")):
        verdict = read_json(verdict_path)
        if not isinstance(verdict, dict) or verdict.get("schema_version") != SCHEMA_VERSION:
            continue
        if verdict.get("status") == "completed":
            out.append((verdict, verdict_path.parent))
    out.sort(key=lambda item: (int(item[0]["repeat"]), str(item[0]["instance_id"])))
    return out


def write_predictions(run: RunDir, cohort: str, model_name: str | None = None) -> Path:
    """Rewrite `<run>/<cohort>/predictions.jsonl` (and per-repeat files) atomically from the unit dirs."""
    cohort_dir = run.cohort_dir(cohort)
    name = model_name or cohort
    lines: dict[int | None, list[str]] = {None: []}
    for verdict, unit_dir in completed_units(cohort_dir):
        patch_path = unit_dir / "patch.diff"
        patch = patch_path.read_text(encoding="utf-8") if patch_path.exists() else ""
        record = {"instance_id": verdict["instance_id"], "model_name_or_path": name, "model_patch": patch}
        repeat = int(verdict["repeat"])
        lines[None].append(json.dumps({**record, "repeat": repeat}, ensure_ascii=False))
        lines.setdefault(repeat, []).append(json.dumps(record, ensure_ascii=False))
    for key, rows in lines.items():
        target = "predictions.jsonl" if key is None else f"predictions.r{key}.jsonl"
        atomic_write_text(cohort_dir / target, "".join(row + "\n" for row in rows))
    return cohort_dir / "predictions.jsonl"
