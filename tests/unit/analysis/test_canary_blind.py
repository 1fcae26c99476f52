"""Blind is not clean (issue 27 item 5): a canary that saw nothing wrong but could not see a bug class it vouches
for (canary.json verdict `inconclusive`) leaves the cohort INCONCLUSIVE, never PASS."""

from __future__ import annotations

from pathlib import Path

from analysis.qualify import analyze
from store.canary_records import CanarySummary
from store.record_io import write_record
from tests.fixtures.synth_results import make_run


def test_a_blind_clean_canary_does_not_pass(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path / "run", instances=10, with_units=False, seed=4)
    clean = analyze(run_dir)
    passed = [n for n, s in clean.summaries.items() if s.verdict == "PASS" and s.probes_compared]
    assert passed, "the synthetic run has a compared cohort whose canary is clean"
    name = passed[0]
    reason = "3 bug class(es) not exercised: logits processors on draft rows (acceptance 0.1% < floor 5%)"
    blind = CanarySummary(cohort=name, reference_cohorts=["ref"], is_reference=False, probes=8, compared=8, diverged=0,
                          infra_errors=0, cached_hits=0, overlapped=0, by_mode={}, first_divergence_histogram={},
                          verdict="inconclusive", reason=reason)  # fmt: skip
    write_record(run_dir / name / "canary.json", blind)
    s = analyze(run_dir).summaries[name]
    assert s.verdict == "INCONCLUSIVE"
    assert "canary inconclusive" in (s.reason or "") and "not exercised" in (s.reason or "")
