"""From saved phase records and metrics.jsonl to uptime.json: comparisons, monitor, verdict and its reasons."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eval.canary.records import ProbeRecord
from eval.spec.load import load_spec
from eval.store.run import RunDir
from eval.uptime import phases as ph
from eval.uptime.session import WORKLOAD, summarize

REPO = Path(__file__).resolve().parents[3]
PROMPT = [1, 2, 3]
GOOD = [5, 6, 7, 8]


def record(cohort: str, phase: str, index: int, out: list[int], soak_finished: int = 0, warm: int = 64) -> ProbeRecord:
    rec = ProbeRecord(
        probe_id=f"{ph.mode_of(phase)}-{index:03d}-target",
        cohort=cohort,
        mode=ph.mode_of(phase),
        index=index,
        role="target",
        prompt_token_ids=PROMPT,
        cached_tokens=64,
        output_token_ids=out,
    )
    rec.extra.update(phase=phase, soak_finished=soak_finished, warm_cached_tokens=warm)
    return rec


def metrics_lines(path: Path, rates: list[float], restart_at: int | None = None) -> None:
    """Cumulative counters: 400 draft tokens per second at the given acceptance; a restart zeroes them."""
    drafted = accepted = gen = 0
    lines = []
    for i, r in enumerate(rates):
        if i == restart_at:
            drafted = accepted = gen = 0
        drafted, accepted, gen = drafted + 400, accepted + int(400 * r), gen + 500
        lines.append({"schema_version": 1, "t": 1000.0 + i, "phase": "periodic", "workload": WORKLOAD,
                      "spec_decode_num_drafts": drafted // 5, "spec_decode_num_draft_tokens": drafted,
                      "spec_decode_num_accepted_tokens": accepted, "generation_tokens": gen,
                      "spec_decode_accepted_per_pos": [accepted // 5] * 5})  # fmt: skip
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))


@pytest.fixture
def run(tmp_path: Path) -> tuple[object, RunDir]:
    loaded = load_spec(
        [str(REPO / "cohorts/soak-cpu.yaml"), "workloads.soak.window_s=1", "workloads.soak.min_window_draft_tokens=1"]
    )
    return loaded, RunDir(tmp_path / "run")


def save(run: RunDir, recs: list[ProbeRecord]) -> None:
    ph.save(run.cohort_dir(recs[0].cohort), recs)


def test_corruption_after_load_is_an_uptime_bug_with_its_first_divergence(run: tuple[object, RunDir]) -> None:
    loaded, rd = run
    save(rd, [record("fixed-off", "fresh", i, GOOD) for i in range(2)])
    save(rd, [record("pr48132-mtp5", "fresh", i, GOOD) for i in range(2)])
    save(rd, [record("pr48132-mtp5", "during-1", i, GOOD, soak_finished=60) for i in range(2)])
    save(
        rd,
        [record("pr48132-mtp5", "after", 0, [9, 9, 9, 9], 120, warm=0), record("pr48132-mtp5", "after", 1, GOOD, 120)],
    )
    metrics_lines(rd.cohort_dir("pr48132-mtp5") / "metrics.jsonl", [0.74] * 30)
    out = summarize(loaded, rd, "pr48132-mtp5")  # type: ignore[arg-type]
    assert out["verdict"] == "uptime-corruption"
    assert out["first_divergence"]["phase"] == "after"
    assert "after 120 soak requests" in out["first_divergence"]["text"]
    assert "after eviction (1/2" in out["first_divergence"]["text"]
    after = next(p for p in out["phases"] if p["phase"] == "after")
    assert after["vs_reference"]["corrupted"] == 1 and after["vs_fresh"]["corrupted"] == 1
    assert out["monitor"]["detector"]["alarm"] is None
    saved = json.loads((rd.cohort_dir("pr48132-mtp5") / "uptime.json").read_text())
    assert saved["verdict"] == "uptime-corruption" and saved["schema_version"] == 1


def test_clean_phases_with_a_collapse_across_a_restart_is_a_performance_bug(run: tuple[object, RunDir]) -> None:
    loaded, rd = run
    save(rd, [record("fixed-off", "fresh", 0, GOOD)])
    for phase in ("fresh", "after"):
        save(rd, [record("fixed-mtp5", phase, 0, GOOD)])
    metrics_lines(rd.cohort_dir("fixed-mtp5") / "metrics.jsonl", [0.74] * 10 + [0.02] * 30, restart_at=12)
    out = summarize(loaded, rd, "fixed-mtp5")  # type: ignore[arg-type]
    assert out["monitor"]["restarts"] == 1
    assert out["verdict"] == "performance-bug"
    assert any("acceptance collapsed" in r for r in out["reasons"])


def test_stationary_clean_cohort_is_clean(run: tuple[object, RunDir]) -> None:
    loaded, rd = run
    save(rd, [record("fixed-off", "fresh", 0, GOOD)])
    for phase in ("fresh", "during-1", "after"):
        save(rd, [record("fixed-mtp5", phase, 0, GOOD)])
    metrics_lines(rd.cohort_dir("fixed-mtp5") / "metrics.jsonl", [0.74] * 40)
    out = summarize(loaded, rd, "fixed-mtp5")  # type: ignore[arg-type]
    assert out["verdict"] == "clean"
    assert [p["phase"] for p in out["phases"]] == ["fresh", "during-1", "after"]
    assert out["monitor"]["windows"][5]["per_position_rate"]


def test_corrupted_fresh_phase_is_not_called_an_uptime_bug(run: tuple[object, RunDir]) -> None:
    loaded, rd = run
    save(rd, [record("fixed-off", "fresh", 0, GOOD)])
    save(rd, [record("fixed-mtp5", "fresh", 0, [1, 1, 1, 1])])
    assert summarize(loaded, rd, "fixed-mtp5")["verdict"] == "corrupted-at-start"  # type: ignore[arg-type]


def test_a_soak_without_prefix_hits_or_accepted_drafts_is_not_called_clean(run: tuple[object, RunDir]) -> None:
    loaded, rd = run
    save(rd, [record("fixed-off", "fresh", 0, GOOD)])
    for phase in ("fresh", "after"):
        rec = record("fixed-mtp5", phase, 0, GOOD)
        rec.cached_tokens = 0
        save(rd, [rec])
    metrics_lines(rd.cohort_dir("fixed-mtp5") / "metrics.jsonl", [0.001] * 20)
    out = summarize(loaded, rd, "fixed-mtp5")  # type: ignore[arg-type]
    assert out["verdict"] == "not-exercised"
    assert any("cached prefix" in r for r in out["reasons"]) and any("almost never" in r for r in out["reasons"])


def test_a_soak_too_short_for_the_monitor_says_so_rather_than_no_drafts(run: tuple[object, RunDir]) -> None:
    """The first bf16 smoke: 60 requests in 7 s, drafts accepted at ~47%, but 3 pooled windows, all baseline."""
    loaded, rd = run
    save(rd, [record("fixed-off", "fresh", 0, GOOD)])
    for phase in ("fresh", "after"):
        save(rd, [record("fixed-mtp5", phase, 0, GOOD)])
    metrics_lines(rd.cohort_dir("fixed-mtp5") / "metrics.jsonl", [0.47] * 3)
    out = summarize(loaded, rd, "fixed-mtp5")  # type: ignore[arg-type]
    assert out["verdict"] == "not-exercised"
    assert out["monitor"]["detector"]["tested_windows"] == 0
    assert [r for r in out["reasons"] if "tested no window" in r and "longer" in r]
    assert not [r for r in out["reasons"] if "almost never" in r or "no draft" in r]


def test_each_phase_says_when_it_began(run: tuple[object, RunDir]) -> None:
    loaded, rd = run
    save(rd, [record("fixed-off", "fresh", 0, GOOD)])
    for k, phase in enumerate(("fresh", "after")):
        rec = record("fixed-mtp5", phase, 0, GOOD)
        rec.extra["started_at"] = 1000.0 + 30 * k
        save(rd, [rec])
    metrics_lines(rd.cohort_dir("fixed-mtp5") / "metrics.jsonl", [0.74] * 40)
    out = summarize(loaded, rd, "fixed-mtp5")  # type: ignore[arg-type]
    assert [p["started_at"] for p in out["phases"]] == [1000.0, 1030.0]
