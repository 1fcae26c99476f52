"""Prometheus parsing and the metrics.jsonl summary (sums over servers and label sets)."""

from __future__ import annotations

import json
from pathlib import Path

from eval.stacks.metrics import append_line, parse, summarize
from store.acceptance import acceptance

SERVER_A = """# HELP vllm:spec_decode_num_drafts Number of spec decoding drafts.
# TYPE vllm:spec_decode_num_drafts counter
vllm:spec_decode_num_drafts_total{engine="0",model_name="m"} 10.0
vllm:spec_decode_num_draft_tokens_total{engine="0",model_name="m"} 50.0
vllm:spec_decode_num_accepted_tokens_total{engine="0",model_name="m"} 20.0
vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="0",model_name="m",position="0"} 8.0
vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="0",model_name="m",position="1"} 6.0
vllm:num_requests_running{engine="0",model_name="m"} 2.0
vllm:prefix_cache_hits_total{engine="0",model_name="m"} 128.0
vllm:generation_tokens_total{engine="0",model_name="m"} 300.0
vllm:generation_tokens_created{engine="0",model_name="m"} 1.7e9
"""
SERVER_B = """vllm:num_requests_running{engine="0",model_name="m"} 1.0
vllm:generation_tokens_total{engine="0",model_name="m"} 100.0
vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="0",model_name="m",position="0"} 2.0
"""


def test_parse_labels_and_values() -> None:
    samples = parse(SERVER_A)
    assert samples[0] == ("vllm:spec_decode_num_drafts_total", {"engine": "0", "model_name": "m"}, 10.0)
    assert all(not name.startswith("#") for name, _, _ in samples)


def test_summary_sums_servers_and_keeps_absent_counters_null() -> None:
    s = summarize([SERVER_A, SERVER_B])
    assert s["num_requests_running"] == 3
    assert s["generation_tokens"] == 400
    assert s["spec_decode_accepted_per_pos"] == [10, 6]
    assert s["prefix_cache_hits"] == 128
    assert s["prompt_tokens"] is None and s["num_requests_waiting"] is None


def test_summary_without_speculation() -> None:
    s = summarize([SERVER_B])
    assert s["spec_decode_num_drafts"] is None


def test_summaries_feed_store_acceptance() -> None:
    before, after = summarize([SERVER_A]), summarize([SERVER_A, SERVER_A])  # the counters doubled
    found = acceptance([before, after])  # the one acceptance (store.acceptance) reads these records as they are
    assert found is not None and (found.drafts, found.draft_tokens, found.accepted_tokens) == (10, 50, 20)
    assert found.rate == 0.4 and found.per_position == (8, 6)
    plain = summarize(['vllm:generation_tokens_total{engine="0"} 100.0'])
    assert acceptance([plain, plain]) is None  # no server exports speculative counters


def test_append_line_writes_whole_records(tmp_path: Path) -> None:
    path = tmp_path / "c" / "metrics.jsonl"
    append_line(path, {"schema_version": 1, "phase": "before"})
    append_line(path, {"schema_version": 1, "phase": "after"})
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    assert [x["phase"] for x in lines] == ["before", "after"]
