"""store.acceptance: the one restart-safe speculative acceptance (canary gate, monitor, report, GPU node script)."""

from __future__ import annotations

from typing import Any

import pytest

from store.acceptance import Acceptance, acceptance, counter_growth, windows


def snap(t: float, drafts: Any, tokens: Any, accepted: Any, per_pos: Any = None, **more: Any) -> dict[str, Any]:
    return {
        "schema_version": 1,
        "t": t,
        "phase": "periodic",
        "workload": "canary",
        "spec_decode_num_drafts": drafts,
        "spec_decode_num_draft_tokens": tokens,
        "spec_decode_num_accepted_tokens": accepted,
        "spec_decode_accepted_per_pos": per_pos,
        **more,
    }


def test_counter_growth_counts_from_the_first_sample_and_from_zero_after_a_drop() -> None:
    assert counter_growth([]) == 0.0
    assert counter_growth([7.0]) == 0.0  # the baseline alone: nothing grew yet
    assert counter_growth([10.0, 30.0, 50.0]) == 40.0
    assert counter_growth([10.0, 30.0, 50.0, 5.0, 25.0]) == 40.0 + 5.0 + 20.0
    assert counter_growth([10.0, None, 30.0, None]) == 20.0
    assert counter_growth([None, None]) == 0.0


def test_acceptance_over_one_workload_with_per_position_counts() -> None:
    records = [
        snap(0, 0, 0, 0, [0, 0, 0]),
        snap(10, 100, 300, 150, [80, 50, 20]),
        snap(20, 200, 600, 300, [160, 100, 40]),
    ]
    a = acceptance(records)
    assert a == Acceptance(drafts=200, draft_tokens=600, accepted_tokens=300, per_position=(160, 100, 40))
    assert a.rate == 0.5
    assert a.per_position_rate == (0.8, 0.5, 0.2)
    assert a.mean_acceptance_length == 2.5


def test_a_restart_counts_the_new_values_from_zero() -> None:
    # before, 100 drafts; the server restarts; 30 drafts after the restart; 20 more
    records = [
        snap(0, 1000, 3000, 1500, [900, 400, 200]),
        snap(10, 1100, 3300, 1650, [990, 440, 220]),
        snap(20, 30, 90, 45, [27, 12, 6]),
        snap(30, 50, 150, 75, [45, 20, 10]),
    ]
    a = acceptance(records)
    assert a is not None
    assert (a.drafts, a.draft_tokens, a.accepted_tokens) == (100 + 30 + 20, 300 + 90 + 60, 150 + 45 + 30)
    assert a.per_position == (90 + 27 + 18, 40 + 12 + 8, 20 + 6 + 4)
    # the before/after delta a restart fools: (50 - 1000) drafts
    assert a.rate == 0.5


def test_a_restart_seen_on_one_counter_resets_all_of_them() -> None:
    # accepted tokens after the restart (400) exceed the value before (300): only the draft counters and the
    # token counters show the drop, yet all 400 accepted tokens were accepted after the restart
    records = [
        snap(0, 200, 600, 300, generation_tokens=5000),
        snap(10, 250, 800, 400, generation_tokens=1000),
    ]
    a = acceptance(records)
    assert a is not None
    assert (a.drafts, a.draft_tokens, a.accepted_tokens) == (250, 800, 400)


def test_none_samples_and_failed_scrapes_are_skipped() -> None:
    records = [
        snap(0, 0, 0, 0),
        snap(5, None, None, None),  # the server was down: no counters
        snap(8, 40, 120, 100, errors=["http://decode:8000/metrics: refused"]),  # a partial sum over P/D workers
        snap(10, 100, 300, 150),
    ]
    assert acceptance(records) == Acceptance(100, 300, 150, ())


def test_no_speculative_counters_is_none_and_no_drafts_has_no_rate() -> None:
    assert acceptance([]) is None
    plain = [snap(0, None, None, None, generation_tokens=10), snap(1, None, None, None, generation_tokens=20)]
    assert acceptance(plain) is None
    idle = acceptance([snap(0, 5, 15, 7, [4, 3]), snap(1, 5, 15, 7, [4, 3])])
    assert idle == Acceptance(0, 0, 0, (0, 0))
    assert idle.rate is None
    assert idle.per_position_rate == ()
    assert idle.mean_acceptance_length is None
    assert acceptance([snap(0, 5, 15, 7)]) == Acceptance(0, 0, 0, ())  # the baseline alone


def test_windows_add_up_to_the_whole_and_survive_a_restart_at_their_border() -> None:
    records = [
        snap(0, 0, 0, 0, [0]),
        snap(4, 10, 30, 20, [10]),
        snap(9, 20, 60, 40, [20]),
        snap(11, 5, 15, 3, [3]),  # restarted between t=9 and t=11
        snap(25, 15, 45, 13, [13]),
    ]
    got = windows(records, 10.0)
    assert [(t0, t1) for t0, t1, _ in got] == [(0.0, 10.0), (10.0, 20.0), (20.0, 30.0)]
    assert got[0][2] == Acceptance(20, 60, 40, (20,))
    assert got[1][2] == Acceptance(5, 15, 3, (3,))
    assert got[2][2] == Acceptance(10, 30, 10, (10,))
    total = acceptance(records)
    assert total is not None
    assert sum(a.accepted_tokens for _, _, a in got) == total.accepted_tokens == 53


def test_windows_list_empty_spans_and_refuse_a_zero_width() -> None:
    got = windows([snap(0, 0, 0, 0), snap(25, 10, 20, 10)], 10.0)
    assert [a.draft_tokens for _, _, a in got] == [0, 0, 20]
    assert got[1][2].rate is None
    assert windows([snap(0, None, None, None)], 10.0) == []
    with pytest.raises(ValueError, match="width_s"):
        windows([], 0.0)


def test_as_dict_carries_counts_and_rates() -> None:
    d = Acceptance(2, 10, 5, (2, 1)).as_dict()
    assert d["rate"] == 0.5
    assert d["per_position_rate"] == [1.0, 0.5]
    assert d["mean_acceptance_length"] == 3.5


def test_numpy_numbers_and_nan_as_a_dataframe_row_holds_them() -> None:
    np = pytest.importorskip("numpy")
    records = [
        snap(np.float64(0), np.int64(0), np.int64(0), np.int64(0), errors=float("nan")),
        snap(np.float64(1), float("nan"), float("nan"), float("nan")),
        snap(np.float64(2), np.int64(10), np.int64(30), np.int64(12)),
    ]
    assert acceptance(records) == Acceptance(10, 30, 12, ())
    assert len(windows(records, 1.0)) == 3
