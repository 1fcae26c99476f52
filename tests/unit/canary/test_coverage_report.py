"""The report's generated-canary section renders a cohort's bug classes and coverage from its canary.json."""

from __future__ import annotations

import json
from pathlib import Path

from analysis.canary_coverage import blocks
from analysis.document import Bullets, Table
from eval.canary.fuzz.coverage import class_verdicts, fuzz_coverage
from eval.canary.records import ProbeRecord


def _rec(i: int, features: list[str], verdict: str, cached: int = 0) -> ProbeRecord:
    rec = ProbeRecord(probe_id=f"fuzz-{i:03d}-r0", cohort="c", mode="fuzz", index=i, role="r0",
                      output_token_ids=[1, 2, 3], cached_tokens=cached, judgement={"verdict": verdict})  # fmt: skip
    rec.extra.update(features=features, case_requests=i + 1, chunk_tokens=[1, 5, 3])
    return rec


def test_classes_and_coverage_render(tmp_path: Path) -> None:
    recs = [_rec(0, ["penalties"], "exact"), _rec(4, ["shared_prefix"], "corrupted", cached=64), _rec(9, [], "exact")]
    metrics = [
        {"spec_decode_num_drafts": 0, "spec_decode_num_draft_tokens": 0, "spec_decode_num_accepted_tokens": 0,
         "spec_decode_accepted_per_pos": [0, 0, 0, 0]},
        {"spec_decode_num_drafts": 10, "spec_decode_num_draft_tokens": 37, "spec_decode_num_accepted_tokens": 30,
         "spec_decode_accepted_per_pos": [10, 9, 7, 4]},
    ]  # fmt: skip
    cov = fuzz_coverage(recs, metrics, 4)
    assert cov["drafts_per_step"] == {"windows": 1, "histogram": {"3.7": 1}, "windows_below_k": 1}
    assert cov["tokens_per_step"] == {"1": 3, "3": 3, "5": 3}
    assert cov["features_by_concurrency"]["penalties"] == {"1": 1} and cov["features_by_concurrency"]["plain"]
    classes = class_verdicts(recs, 0.81, 0.3)
    assert classes["state after a prefix-cache hit (one-token and short tails: PR 55178)"]["verdict"] == "FAIL"
    assert "PASS" in {v["verdict"] for v in classes.values()}
    (tmp_path / "c").mkdir()
    data = {"verdict": "corrupted", "extra": {"fuzz": cov, "classes": classes}}
    (tmp_path / "c" / "canary.json").write_text(json.dumps(data))
    out = blocks(tmp_path, ["c", "missing"], {"c": "Cohort C"})
    tables = [b for b in out if isinstance(b, Table)]
    assert any(r[2] == "FAIL" for r in tables[0].rows)
    assert any("windows below K" in line for b in out if isinstance(b, Bullets) for line in b.items)
    assert blocks(tmp_path, ["missing"], {}) == []
