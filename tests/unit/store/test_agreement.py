"""The canary's gate and the report compute one acceptance: after a watchdog restart they still agree (issue 33:
the gate once used a before/after delta that a restart fools, while the report summed counter growth)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from analysis.summary import acceptance as report_acceptance
from eval.canary.results import probe_acceptance
from store.acceptance import acceptance

COUNTERS = ("spec_decode_num_drafts", "spec_decode_num_draft_tokens", "spec_decode_num_accepted_tokens")


def test_gate_and_report_agree_across_a_restart(tmp_path: Path) -> None:
    # 100 drafted / 80 accepted tokens, a restart, then 50 drafted / 10 accepted: 90/150, whatever the order of
    # the counters' sizes before and after the restart
    rows = [("before", 0, 400, 300), ("periodic", 1, 500, 380), ("periodic", 2, 20, 2), ("after", 3, 50, 10)]
    records = [
        {"schema_version": 1, "t": float(t), "phase": phase, "workload": "canary", "generation_tokens": 1000 * t + 5,
         COUNTERS[0]: tokens // 5, COUNTERS[1]: tokens, COUNTERS[2]: accepted}
        for phase, t, tokens, accepted in rows
    ]  # fmt: skip
    records[2]["generation_tokens"] = 7  # the restarted server counts from zero
    records[3]["generation_tokens"] = 9
    cohort = tmp_path / "c"
    cohort.mkdir()
    (cohort / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records) + '{"torn": ')
    expected = 90 / 150
    found = acceptance(records)
    assert found is not None and found.rate == expected
    assert probe_acceptance(cohort) == expected
    frame = pd.DataFrame([{"cohort": "c", **r} for r in records])
    assert report_acceptance(frame, "c") == expected
    naive = (records[-1][COUNTERS[2]] - records[0][COUNTERS[2]]) / (records[-1][COUNTERS[1]] - records[0][COUNTERS[1]])
    assert naive != expected  # what a before/after delta would have said (negative counts)
