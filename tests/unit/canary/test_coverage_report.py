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


def test_steps_from_the_iteration_log_show_mixed_draft_counts(tmp_path: Path) -> None:
    from eval.canary.fuzz.coverage import steps_from_logs

    (tmp_path / "logs").mkdir()
    fmt = (
        "(APIServer pid=1) INFO [loggers.py:200] Iteration({i}): 0 context requests, 0 context tokens, {g} generation"
        " requests, {t} generation tokens, iteration elapsed time: 3.10 ms{d}, CPU KV cache usage: 0.1%"
    )
    steps = [(1, 5, ""), (2, 10, ""), (2, 7, ""), (3, 9, ""), (0, 0, ""), (1, 5, " (dummy)")]
    text = "\n".join(fmt.format(i=i, g=g, t=t, d=d) for i, (g, t, d) in enumerate(steps))
    (tmp_path / "logs" / "server.0.log").write_text(text)
    got = steps_from_logs(tmp_path, 4)  # K=4: full, full, mixed (4 + 1 drafts), 2 drafts each, no decode, dummy
    assert got is not None and got["decode_steps"] == 4
    assert got["steps_mixing_draft_counts"] == 1 and got["steps_below_k"] == 2
    assert got["histogram"]["2 req, 5 drafts"] == 1
    assert steps_from_logs(tmp_path / "none", 4) is None


def test_reasoning_classes_are_vouched_for_only_where_the_server_runs_a_reasoning_parser() -> None:
    from eval.canary.fuzz.coverage import REASONING_CLASSES

    names = [name for name, _, _ in REASONING_CLASSES]
    recs = [_rec(0, ["penalties"], "exact"), _rec(1, ["structured:regex", "reasoning:open"], "corrupted")]
    assert not set(names) & set(class_verdicts(recs, 0.8, 0.3))  # no parser: not a class of this server
    with_parser = class_verdicts(recs, 0.8, 0.3, reasoning_parser=True)
    assert with_parser[names[0]]["verdict"] == "FAIL"
    assert with_parser[names[1]]["verdict"] == "INCONCLUSIVE"  # no request carried a thinking budget
