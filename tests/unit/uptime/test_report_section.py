"""The report's uptime section reads metrics.jsonl through store.acceptance.windows and uptime.json."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

from analysis.document import Image, Table
from analysis.uptime import plot_acceptance, section, series
from tests.unit.uptime.test_summary import metrics_lines


def make_run(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    metrics_lines(run / "c1" / "metrics.jsonl", [0.7] * 12 + [0.7] * 12, restart_at=12)
    (run / "c1" / "uptime.json").write_text(json.dumps({
        "schema_version": 1, "cohort": "c1", "verdict": "uptime-corruption",
        "phases": [{"phase": "fresh", "vs_reference": {"corrupted": 0, "compared": 4}, "started_at": 1003.0},
                   {"phase": "after", "vs_reference": {"corrupted": 3, "compared": 4},
                    "vs_fresh": {"corrupted": 3, "compared": 4}}],
        "monitor": {"detector": {"baseline": 0.7, "max_e_value": 0.9, "alarm": None}},
        "first_divergence": {"text": "after 120 soak requests (after phase): 3/4 probes corrupted"},
    }))  # fmt: skip
    return run


def test_series_is_restart_safe(tmp_path: Path) -> None:
    rows = series(make_run(tmp_path), "c1", width_s=4)
    rates = [r["rate"] for r in rows if r["rate"] is not None]
    assert rates and all(abs(r - 0.7) < 0.01 for r in rates)  # the restart does not read as a negative window


def test_section_has_the_table_the_fact_and_the_plot(tmp_path: Path) -> None:
    run = make_run(tmp_path)
    name = plot_acceptance(run, tmp_path / "plots")
    assert name is not None and (tmp_path / "plots" / name).stat().st_size > 1000
    blocks = section(SimpleNamespace(run=SimpleNamespace(path=run)), {"uptime_acceptance": name})  # type: ignore[arg-type]
    table = next(b for b in blocks if isinstance(b, Table))
    assert table.rows[0][:5] == ["c1", "uptime-corruption", "0/4", "-", "3/4 (own fresh 3/4)"]
    assert any(isinstance(b, Image) for b in blocks)
    assert any("after 120 soak requests" in getattr(b, "text", "") for b in blocks)
    said = [getattr(b, "text", "") for b in blocks if getattr(b, "text", "").startswith("What the phases say")]
    assert said and "c1: uptime: corruption that grows with uptime" in said[0]


def test_no_uptime_data_no_section(tmp_path: Path) -> None:
    assert section(SimpleNamespace(run=SimpleNamespace(path=tmp_path)), {}) == []  # type: ignore[arg-type]


def test_per_position_acceptance_is_weighted_by_drafts() -> None:
    from analysis.uptime import per_position

    rec = {"monitor": {"windows": [
        {"drafts": 10, "per_position_rate": [0.8, 0.4]},
        {"drafts": 30, "per_position_rate": [0.4, 0.0]},
        {"drafts": 0, "per_position_rate": []},
    ]}}  # fmt: skip
    assert per_position(rec) == "0.50 0.10"
    assert per_position({}) == "-"
