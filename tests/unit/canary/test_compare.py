"""Token comparison, reference choice, per-cohort summaries and verdicts (pure functions, no servers)."""

from __future__ import annotations

from eval.canary.compare import apply_comparison, compare_tokens, pick_reference, summarize
from eval.canary.records import ProbeRecord


def rec(pid: str = "prefix_hit-000-target", out: list[int] | None = None, err: str | None = None, **kw) -> ProbeRecord:  # type: ignore[no-untyped-def]
    mode = pid.split("-")[0]
    return ProbeRecord(
        probe_id=pid,
        cohort=kw.pop("cohort", "c"),
        mode=mode,
        index=0,
        role=pid.rsplit("-", 1)[1],
        prompt_token_ids=kw.pop("prompt", [1, 2, 3]),
        output_token_ids=out,
        infra_error=err,
        **kw,
    )


def test_identical_outputs_do_not_diverge() -> None:
    d = compare_tokens([5, 6, 7], [5, 6, 7])
    assert (d.diverged, d.first_divergence, d.divergent_tokens, d.compared_tokens) == (False, None, 0, 3)


def test_first_divergence_and_count() -> None:
    d = compare_tokens([5, 9, 7, 8], [5, 6, 7, 1])
    assert (d.first_divergence, d.divergent_tokens) == (1, 2)


def test_a_shorter_reply_diverges_where_it_ends() -> None:
    d = compare_tokens([5, 6], [5, 6, 7, 8])
    assert (d.first_divergence, d.divergent_tokens, d.compared_tokens) == (2, 2, 4)


def test_apply_comparison_fills_the_record() -> None:
    r = rec(out=[1, 2, 3])
    apply_comparison(r, rec(out=[1, 2, 4]), "ref")
    assert (r.reference_cohort, r.diverged, r.first_divergence, r.divergent_tokens) == ("ref", True, 2, 1)


def test_nothing_to_compare_leaves_diverged_null() -> None:
    failed = rec(out=None, err="HTTP 500")
    apply_comparison(failed, rec(out=[1]), "ref")
    assert failed.diverged is None
    fine = rec(out=[1])
    apply_comparison(fine, rec(out=None, err="connection refused"), "ref")
    assert fine.diverged is None and fine.reference_cohort == "ref"


def test_different_prompts_are_not_compared() -> None:
    r = rec(out=[1])
    apply_comparison(r, rec(out=[2], prompt=[9, 9]), "ref")
    assert r.diverged is None and "prompt token ids differ" in r.extra["comparison_error"]


def test_reference_falls_back_when_the_control_has_no_output() -> None:
    pid = "fresh-000-target"
    outputs = {"ctl": {pid: rec(pid, out=None, err="engine dead")}, "ref": {pid: rec(pid, out=[1])}}
    assert pick_reference(pid, "ctl", "ref", outputs) == "ref"
    outputs["ctl"][pid] = rec(pid, out=[1])
    assert pick_reference(pid, "ctl", "ref", outputs) == "ctl"
    assert pick_reference(pid, None, "ref", outputs) == "ref"


def _compared(pid: str, first: int | None, mode_err: str | None = None) -> ProbeRecord:
    r = rec(pid, out=None if mode_err else [1], err=mode_err)
    if not mode_err:
        r.reference_cohort, r.diverged, r.first_divergence = "ref", first is not None, first
    return r


def test_summary_counts_modes_histogram_and_verdict() -> None:
    records = [
        _compared("prefix_hit-000-target", 1),
        _compared("prefix_hit-001-target", 1),
        _compared("prefix_hit_concurrent-000-target", 2),
        _compared("prefix_hit_concurrent-000-concurrent", None),
        _compared("fresh-000-target", None),
    ]
    s = summarize("c", records, is_reference=False, expected=5)
    assert (s.verdict, s.diverged, s.compared) == ("corrupted", 3, 5)
    assert s.first_divergence_histogram == {"1": 2, "2": 1}
    assert s.by_mode["prefix_hit"].diverged == 2 and s.by_mode["fresh"].diverged == 0


def test_verdicts_clean_failed_reference_no_data() -> None:
    clean = [_compared("fresh-000-target", None)]
    assert summarize("c", clean, False, 1).verdict == "clean"
    assert summarize("c", [_compared("fresh-000-target", None, "HTTP 500")], False, 1).verdict == "failed"
    assert summarize("c", clean, False, 3).verdict == "failed"  # probes missing on disk count as failures
    ref = [rec("fresh-000-target", out=[1])]
    assert summarize("r", ref, True, 1).verdict == "reference"
    assert summarize("c", ref, False, 1).verdict == "no-data"


def test_a_kv_fail_policy_error_is_expected_not_a_server_error() -> None:
    """Under kv_load_failure_policy fail with injected KV load faults, a request's error is what must happen (the
    crash oracle's fact): not an infra error; a server that is gone still is one, and so is any error elsewhere."""
    fail = {"kv_faults": {"policy": "fail"}}
    err = "HTTP 500: KV load failed"
    ok = [_compared("fuzz-000-target", None), rec("fuzz-001-target", err=err, extra=fail)]
    s = summarize("c", ok, False, 0)
    assert (s.infra_errors, s.verdict, s.extra) == (0, "clean", {"expected_errors": 1})
    gone = rec("fuzz-001-target", err="ConnectError: All connection attempts failed", extra=fail)
    assert summarize("c", [ok[0], gone], False, 0).infra_errors == 1
    recompute = rec("fuzz-001-target", err=err, extra={"kv_faults": {"policy": "recompute"}})
    assert summarize("c", [ok[0], recompute], False, 0).verdict == "failed"
