"""The e-detector: no alarm on stationary acceptance (seeded noise), an alarm soon after a collapse."""

from __future__ import annotations

import random

from eval.uptime.detector import Window, detect, pool


def windows(rates: list[float], tokens: int = 400, seed: int = 0) -> list[Window]:
    rng = random.Random(seed)
    out = []
    for i, p in enumerate(rates):
        accepted = sum(rng.random() < p for _ in range(tokens))
        out.append(Window(float(i), float(i + 1), accepted, tokens))
    return out


def test_stationary_acceptance_never_alarms_over_many_seeds() -> None:
    alarms = sum(detect(windows([0.74] * 60, seed=s), 3, 0.5, 0.001).alarmed for s in range(50))
    assert alarms == 0


def test_collapse_alarms_within_a_bounded_delay() -> None:
    d = detect(windows([0.74] * 10 + [0.01] * 30), 3, 0.5, 0.001)
    assert d.alarmed and d.alarm_at is not None
    assert 10 <= d.alarm_at <= 30
    assert d.baseline is not None and 0.6 < d.baseline < 0.9
    assert d.floor is not None and abs(d.floor - d.baseline / 2) < 1e-9


def test_a_mild_dip_above_the_floor_does_not_alarm() -> None:
    assert not detect(windows([0.74] * 10 + [0.55] * 40), 3, 0.5, 0.001).alarmed


def test_no_baseline_acceptance_means_nothing_to_test() -> None:
    d = detect(windows([0.0] * 20), 3, 0.5, 0.001)
    assert d.tested == 0 and not d.alarmed


def test_pool_merges_thin_windows_and_drops_the_short_tail() -> None:
    thin = [Window(float(i), float(i + 1), 5, 10) for i in range(7)]
    pooled = pool(thin, 30)
    assert [(w.t_start, w.t_end, w.draft_tokens) for w in pooled] == [(0.0, 3.0, 30), (3.0, 6.0, 30)]
