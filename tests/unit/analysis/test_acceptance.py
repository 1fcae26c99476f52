"""analysis.summary.acceptance: the rate joined to the trajectories counts the rollouts' drafts, not the canary's."""

from __future__ import annotations

import pandas as pd

from analysis.summary import acceptance


def snapshots(rows: list[tuple[str, str, float, int, int]]) -> pd.DataFrame:
    cols = ["cohort", "workload", "t", "spec_decode_num_draft_tokens", "spec_decode_num_accepted_tokens"]
    return pd.DataFrame(rows, columns=cols)


def test_the_rollouts_window_is_counted_when_the_cohort_ran_rollouts() -> None:
    # the H200 organism run: canary 3650 drafted / 734 accepted, rollouts 3810 / 2842 (48% if mixed)
    metrics = snapshots([
        ("a", "canary", 1.0, 0, 0),
        ("a", "canary", 2.0, 3650, 734),
        ("a", "swebench", 3.0, 3650, 734),
        ("a", "swebench", 4.0, 7460, 3576),
        ("b", "swebench", 1.0, 0, 0),
        ("b", "swebench", 2.0, 100, 10),
    ])  # fmt: skip
    assert acceptance(metrics, "a") == 2842 / 3810
    assert acceptance(metrics, "b") == 0.1


def test_a_canary_only_cohort_counts_the_canary() -> None:
    metrics = snapshots([("c", "canary", 1.0, 0, 0), ("c", "canary", 2.0, 200, 40)])
    assert acceptance(metrics, "c") == 0.2
    assert acceptance(metrics, "missing") is None
