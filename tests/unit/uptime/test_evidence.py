"""An uptime.json as evidence in the qualification verdict (analysis/uptime_evidence.py)."""

from __future__ import annotations

from analysis.uptime_evidence import FAILS, MISSING, NOTES, evidence

COLLAPSE = "acceptance collapsed: e-value 1200 >= 1000 in the window ending 40 s into the soak (rate 1.0%)"


def test_corruption_after_load_fails_with_its_first_divergence_and_the_collapse() -> None:
    rec = {
        "verdict": "uptime-corruption",
        "reasons": ["corruption that grows with uptime: ...", "after: ...", COLLAPSE],
        "first_divergence": {"text": "after 300 soak requests (after phase): 2/4 probes corrupted vs the reference"},
    }
    got = evidence(rec)
    assert got is not None and got[0] == FAILS
    assert "after 300 soak requests" in got[1] and "acceptance collapsed" in got[1]


def test_a_collapse_with_clean_phases_is_a_performance_bug_named_in_the_notes() -> None:
    rec = {"verdict": "performance-bug", "reasons": ["performance bug: acceptance collapsed while ...", COLLAPSE]}
    got = evidence(rec)
    assert got is not None and got[0] == NOTES
    assert got[1].startswith("uptime: performance bug, not corruption") and "e-value 1200" in got[1]


def test_blind_or_failed_soaks_are_missing_evidence_and_the_reference_is_none() -> None:
    blind = evidence({"verdict": "not-exercised", "reasons": ["the acceptance monitor tested no window"]})
    assert blind is not None and blind[0] == MISSING and "tested no window" in blind[1]
    failed = evidence({"verdict": "failed", "reasons": ["2 phase probes got no answer"]})
    assert failed is not None and failed[0] == MISSING
    assert evidence({"verdict": "reference", "is_reference": True}) is None
    assert evidence(None) is None
    clean = evidence({"verdict": "clean", "reasons": ["0 corrupted probes in 3 phases"]})
    assert clean is not None and clean[0] == NOTES
