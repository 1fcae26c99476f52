"""bench_fuzz scores a zoo catch against the clean speculative control (issue 27, What to build item 7): a failing
request counts only where its output differs from the control's output of the same request."""

from __future__ import annotations

from benchmarks.bench_fuzz import differs
from eval.canary.records import ProbeRecord


def _rec(ids: list[int], lps: list[float] | None = None, **kw: object) -> ProbeRecord:
    return ProbeRecord(
        probe_id="fuzz-000-r1", cohort="c", mode="fuzz", index=0, role=str(kw.pop("role", "r1")),
        output_token_ids=ids, output_token_logprobs=lps or [-1.0] * len(ids),
        finish_reason=str(kw.pop("finish_reason", "length")), **kw,
    )  # fmt: skip


def test_identical_output_is_not_a_difference() -> None:
    assert differs(_rec([1, 2, 3]), _rec([1, 2, 3])) is None


def test_tokens_finish_errors_and_logprobs_differ() -> None:
    assert differs(_rec([1, 2, 3]), _rec([1, 2, 4])) == "tokens"
    assert differs(_rec([1, 2, 3]), _rec([1, 2, 3], finish_reason="stop")) == "finish_reason"
    assert differs(_rec([1, 2], infra_error="HTTP 500"), _rec([1, 2])) == "error on one side only"
    assert differs(_rec([1, 2]), _rec([1, 2], infra_error="HTTP 500")) == "the control failed the request"
    assert differs(_rec([1, 2], infra_error="x"), _rec([1, 2], infra_error="y")) is None
    got = differs(_rec([1, 2], [-1.0, -4.0]), _rec([1, 2], [-1.0, -1.2]))
    assert got is not None and got.startswith("logprobs")
    assert differs(_rec([1, 2], [-1.0, -1.3]), _rec([1, 2], [-1.0, -1.2])) is None  # within the tolerance
    assert differs(_rec([1]), None) == "no control record"


def test_a_client_closed_request_is_compared_on_the_shared_prefix() -> None:
    assert differs(_rec([1, 2, 3, 4], role="bg"), _rec([1, 2], role="bg")) is None
    assert differs(_rec([1, 9, 3, 4], role="bg"), _rec([1, 2], role="bg")) == "tokens"
    assert differs(_rec([1, 2, 3, 4]), _rec([1, 2])) == "tokens"  # a finished request: the whole output
