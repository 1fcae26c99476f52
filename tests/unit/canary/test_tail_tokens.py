"""Every canary record says how many prompt tokens the serving worker computed itself (`extra.tail_tokens`):
1 after a prefix hit with a one-token tail, or on a P/D decode worker after the KV transfer."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

from eval.canary.client import Reply
from eval.canary.modes import ProbeContext, record


def ctx() -> ProbeContext:
    client = cast(Any, SimpleNamespace(base_url="http://127.0.0.1:1"))
    return ProbeContext(client=client, book=cast(Any, None), cfg=cast(Any, None), cohort="c", tool_choice="none")


def test_tail_tokens_from_usage() -> None:
    rec = record(ctx(), "prefix_hit_concurrent", 0, "target", [1, 2], Reply(prompt_tokens=129, cached_tokens=128))
    assert rec.extra["tail_tokens"] == 1
    assert rec.server == "http://127.0.0.1:1"


def test_no_tail_tokens_without_cached_tokens() -> None:
    rec = record(ctx(), "fresh", 0, "target", [1, 2], Reply(prompt_tokens=129, cached_tokens=None))
    assert "tail_tokens" not in rec.extra
