"""Bounded command execution: exit codes, head-and-tail truncation, the time limit."""

from __future__ import annotations

from eval.sandbox.process import Collector, run_limited


def test_exit_code_and_merged_output() -> None:
    result = run_limited(["bash", "-c", "echo out; echo err >&2; exit 3"], timeout_s=30)
    assert result.exit_code == 3
    assert "out" in result.output and "err" in result.output
    assert not result.timed_out


def test_output_keeps_head_and_tail() -> None:
    script = "echo FIRST; head -c 3000000 /dev/zero | tr '\\0' x; echo; echo LAST"
    result = run_limited(["bash", "-c", script], timeout_s=60, max_bytes=10_000)
    assert result.output.startswith("FIRST")
    assert result.output.rstrip().endswith("LAST")
    assert "bytes of output truncated" in result.output
    assert len(result.output) < 10_200


def test_collector_accounts_for_dropped_bytes() -> None:
    collector = Collector(100)
    for _ in range(50):
        collector.add(b"0123456789")
    text = collector.text()
    assert text.startswith("0123456789" * 5)
    assert text.endswith("0123456789" * 5)
    assert "[... 400 bytes of output truncated ...]" in text


def test_time_limit_kills_the_process_group() -> None:
    result = run_limited(["bash", "-c", "echo started; sleep 300 & sleep 300"], timeout_s=1)
    assert result.timed_out
    assert result.exit_code != 0
    assert "started" in result.output
