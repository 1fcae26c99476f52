"""`python -m analysis` and the `specqual report` / `specqual compare` forwarding, as real processes."""

from __future__ import annotations

import json
from pathlib import Path

from tests.integration.analysis.conftest import cli


def test_not_a_run_directory_is_exit_2(tmp_path: Path) -> None:
    own = cli("-m", "analysis", "report", str(tmp_path))
    assert own.returncode == 2 and "not a specqual run directory" in own.stderr
    forwarded = cli("-m", "eval.cli", "report", str(tmp_path / "missing"))
    assert forwarded.returncode == 2 and "no such directory" in forwarded.stderr


def test_exit_codes_follow_fail_on(small_run: Path, tmp_path: Path) -> None:
    plain = cli("-m", "analysis", "report", str(small_run), "--out", str(tmp_path / "a"))
    assert plain.returncode == 0, plain.stderr
    assert (tmp_path / "a" / "report.html").exists() and not (small_run / "report.md").exists()
    gated = cli("-m", "eval.cli", "report", str(small_run), "--out", str(tmp_path / "b"), "--fail-on", "INCONCLUSIVE")
    assert gated.returncode == 1
    assert "unpatched-mtp5" in gated.stderr


def test_compare_two_runs_of_the_same_matrix(small_run: Path, tmp_path: Path) -> None:
    proc = cli("-m", "eval.cli", "compare", str(small_run), str(small_run), "--out", str(tmp_path / "c.md"))
    assert proc.returncode == 0, proc.stderr
    text = (tmp_path / "c.md").read_text()
    assert "| Original regression | 5 / 120 | 4.17% | 5 / 120 | 4.17% | +0.00 (+0.00 .. +0.00), n=40 |" in text
    assert "FAIL → FAIL" in text
    other = tmp_path / "other"
    other.mkdir()
    (other / "run.json").write_text(json.dumps({"schema_version": 1, "run_id": "other", "cohorts": []}))
    mismatch = cli("-m", "eval.cli", "compare", str(small_run), str(other))
    assert mismatch.returncode == 2 and "share no cohort" in mismatch.stderr
