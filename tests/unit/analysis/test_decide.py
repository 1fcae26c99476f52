"""`python -m analysis decide`: decisions on the complete prefix of the shared order, as the report takes them."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from analysis import analyze
from analysis.decide import decisions
from analysis.load import load_run
from store import order
from store.decisions import Decisions
from tests.fixtures.synth_results import make_run


def test_the_prefix_stops_at_the_first_unfinished_instance(tmp_path: Path) -> None:
    run = make_run(tmp_path / "r", instances=30, resolved_counts={"unpatched-off": 35, "unpatched-mtp5": 3,
                   "patched-off": 35, "patched-mtp5": 35}, seed=1)  # fmt: skip
    full = decisions(load_run(run)).comparisons
    assert full["unpatched-mtp5"].prefix == 30 and full["unpatched-mtp5"].decision == "FAIL"
    # The report's sequential outcome is the same decision at the same instance.
    seq = analyze(run).comparisons["unpatched-mtp5"].sequential
    assert seq is not None and (seq.decision, seq.instances) == ("FAIL", full["unpatched-mtp5"].decided_at)
    tenth = order.ordered(p.name for p in (run / "patched-mtp5" / "units").iterdir())[10]
    shutil.rmtree(run / "patched-mtp5" / "units" / tenth / "r1")  # a repeat still running
    partial = decisions(load_run(run)).comparisons
    assert partial["patched-mtp5"].prefix == 10 and partial["unpatched-mtp5"].prefix == 30


def test_the_cli_prints_json(tmp_path: Path) -> None:
    run = make_run(tmp_path / "r", instances=6, resolved_counts={"unpatched-off": 7, "unpatched-mtp5": 1,
                   "patched-off": 7, "patched-mtp5": 7}, seed=2)  # fmt: skip
    out = subprocess.run([sys.executable, "-m", "analysis", "decide", str(run), "--json"], capture_output=True,
                         text=True, check=True)  # fmt: skip
    got = Decisions.model_validate(json.loads(out.stdout))  # the record the pipeline's early stop reads
    assert got.repeats == 3 and set(got.comparisons) == {"unpatched-mtp5", "patched-mtp5"}
    assert got.comparisons["patched-mtp5"].decision == "INCONCLUSIVE"
