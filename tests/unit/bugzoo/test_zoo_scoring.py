"""The zoo is read from the cohort files (no table by hand), and a catch needs output that differs from the clean
speculative control's, not only a corrupted verdict (issue 27, item 7)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchmarks.bench_bugzoo import caught, read_run
from benchmarks.zoo_table import zoo_from_file, zoo_from_spec

REPO = Path(__file__).resolve().parents[3]


def test_every_patch_build_of_the_zoo_files_is_a_bug_with_its_clean_control() -> None:
    zoo = zoo_from_file(REPO / "cohorts" / "bugzoo-cpu.yaml")
    assert zoo.reference == "stock-off" and zoo.controls == ("stock-self4",)
    prs = {b.cohort: b.pr for b in zoo.bugs}
    assert prs["pr31908-self4"] == "#31908" and prs["pr47616-self4"] == "#47616" and prs["pr14702-self4"] == "#14702"
    assert {b.control for b in zoo.bugs} == {"stock-self4"}
    mamba = zoo_from_file(REPO / "cohorts" / "bugzoo-mamba-cpu.yaml")
    # the reverted PR 55178 build = the CPU fixes + the fix reversed: its control is the build with the fixes only
    assert {b.cohort: (b.control, b.pr) for b in mamba.bugs}["pr55178-mtp5"] == ("fixed-mtp5", "#55178")


def _spec() -> dict:
    return {
        "name": "toy",
        "builds": {"clean": {"patches": []}, "bug": {"patches": [{"file": "patches/x-pr123.patch"}]}},
        "speculative": {"off": {"method": None}, "k4": {"method": "draft_model"}},
        "workloads": {"canary": {"reference": "clean-off"}},
        "matrix": {
            "cohorts": [
                {"name": "clean-off", "build": "clean", "speculative": "off"},
                {"name": "clean-k4", "build": "clean", "speculative": "k4"},
                {"name": "bug-k4", "build": "bug", "speculative": "k4"},
            ]
        },
    }


def _write_run(root: Path, bug_outputs: list[int], control_outputs: list[int]) -> str:
    run = root / "results" / "toy-run"
    (run).mkdir(parents=True)
    (run / "run.json").write_text(json.dumps({"spec": _spec(), "base_dir": str(root)}))
    for cohort, verdict, out in (
        ("clean-off", "reference", [1, 2, 3]),
        ("clean-k4", "corrupted", control_outputs),
        ("bug-k4", "corrupted", bug_outputs),
    ):
        (run / cohort / "probes").mkdir(parents=True)
        summary = {"cohort": cohort, "verdict": verdict, "corrupted": 1, "compared": 1}
        (run / cohort / "canary.json").write_text(json.dumps(summary))
        record = {"probe_id": "m-0-a", "output_token_ids": out, "infra_error": None}
        (run / cohort / "probes" / "m-0-a.json").write_text(json.dumps(record))
    return "toy-run"


def test_a_verdict_that_only_repeats_the_controls_difference_is_no_catch(tmp_path: Path, monkeypatch: Any) -> None:
    import benchmarks.bench_bugzoo as bench

    monkeypatch.setattr(bench, "ROOT", tmp_path)
    assert zoo_from_spec(_spec(), tmp_path).bugs[0].control == "clean-k4"
    run = _write_run(tmp_path, bug_outputs=[1, 2, 9], control_outputs=[1, 2, 9])
    rows = {r.cohort: r for r in read_run(run)}
    assert rows["bug-k4"].role == "bug" and rows["bug-k4"].differs_from_control == 0
    assert not caught(rows["bug-k4"])  # inherited from the control's own FAIL
    run2 = tmp_path / "results" / "toy-run"
    (run2 / "bug-k4" / "probes" / "m-0-a.json").write_text(
        json.dumps({"probe_id": "m-0-a", "output_token_ids": [1, 7, 7], "infra_error": None})
    )
    rows = {r.cohort: r for r in read_run(run)}
    assert rows["bug-k4"].differs_from_control == 1 and caught(rows["bug-k4"])
    assert rows["clean-k4"].role == "control" and rows["clean-off"].role == "reference"
