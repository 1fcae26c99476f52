"""Blind is not clean under `modes: [fuzz]` (issue 27 "What to build" item 5), end to end through the comparison
pass: a speculative cohort whose generated cases found nothing wrong is `inconclusive`, with the reason, when
draft acceptance is under `acceptance_floor` or a bug class's trigger never ran; it is `clean` only when every
class it vouches for was exercised."""

from __future__ import annotations

import json
from pathlib import Path

from eval.canary.fuzz.coverage import CLASSES
from eval.canary.records import ProbeRecord, write_record
from eval.canary.results import compare_and_summarize
from eval.spec.load import load_spec
from eval.store.run import RunDir, open_run

DEMO = Path(__file__).resolve().parents[3] / "cohorts" / "canary-cpu.yaml"
EVERY_TRIGGER = sorted({t for _, triggers, _ in CLASSES for t in triggers})


def _write(run: RunDir, cohort: str, features: list[str]) -> None:
    for i, feat in enumerate(features):
        rec = ProbeRecord(
            probe_id=f"fuzz-{i:03d}-r0", cohort=cohort, mode="fuzz", index=i, role="r0", prompt_token_ids=[1, 2],
            output_token_ids=[10, 11, 12], output_text="abc", finish_reason="length", cached_tokens=64,
            output_token_logprobs=[-0.1, -0.2, -0.3], output_top_logprobs=[{"10": -0.1}, {"11": -0.2}, {"12": -0.3}],
            params={"max_tokens": 3, "temperature": 0.0},
        )  # fmt: skip
        rec.extra.update(features=[feat], endpoint="completions", completion_tokens=3)
        write_record(run.cohort_dir(cohort), rec)


def _metrics(run: RunDir, cohort: str, drafted: int, accepted: int) -> None:
    rows = [
        {"workload": "canary", "t": 1.0, "spec_decode_num_drafts": 0, "spec_decode_num_draft_tokens": 0,
         "spec_decode_num_accepted_tokens": 0},
        {"workload": "canary", "t": 2.0, "spec_decode_num_drafts": drafted // 5,
         "spec_decode_num_draft_tokens": drafted, "spec_decode_num_accepted_tokens": accepted},
    ]  # fmt: skip
    path = run.cohort_dir(cohort) / "metrics.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def _verdicts(tmp_path: Path, features: list[str], drafted: int, accepted: int) -> tuple[str, str]:
    loaded = load_spec([str(DEMO), "workloads.canary.modes=[fuzz]"])
    run = open_run(loaded, tmp_path, "r")
    for cohort in ("fixed-off", "fixed-mtp5"):
        _write(run, cohort, features)
    _metrics(run, "fixed-mtp5", drafted, accepted)
    s = compare_and_summarize(loaded, run, {})["fixed-mtp5"]
    return s.verdict, s.reason


def test_every_trigger_run_with_kept_drafts_is_clean(tmp_path: Path) -> None:
    verdict, reason = _verdicts(tmp_path, EVERY_TRIGGER, drafted=1000, accepted=700)
    assert verdict == "clean", reason


def test_acceptance_under_the_floor_is_inconclusive_with_the_reason(tmp_path: Path) -> None:
    verdict, reason = _verdicts(tmp_path, EVERY_TRIGGER, drafted=1000, accepted=1)  # the random MTP head: 0.1%
    assert verdict == "inconclusive"
    assert "not exercised" in reason and "draft acceptance 0.00 < 0.3" in reason


def test_a_trigger_that_never_ran_is_inconclusive_and_named(tmp_path: Path) -> None:
    never = "sampled"  # no request of the run drew temperature > 0
    verdict, reason = _verdicts(tmp_path, [t for t in EVERY_TRIGGER if t != never], drafted=1000, accepted=700)
    assert verdict == "inconclusive"
    assert "random-sampling path of the rejection sampler (its trigger never ran" in reason
