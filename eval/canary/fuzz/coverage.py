"""What a fuzz run exercised, and which bug classes it can vouch for (issue 27 items 4 and 5).

`fuzz_coverage(records, metrics, spec_tokens)` -> the `extra.fuzz` block of `canary.json`:
- `features_by_concurrency`: requests per feature tag and case size (1, 2-3, 4-7, 8-16);
- `tokens_per_step`: streamed chunk sizes over every request (a chunk of t tokens = one engine step that kept
  t - 1 drafts; an upper bound where the server merged steps for a slow reader);
- `drafts_per_step`: from /metrics snapshots taken every second during the run, the draft tokens per drafting
  request in each window (K everywhere = every request-step carried K drafts; below K = trimmed or mixed steps),
  and the windows in which draft counts below K occurred;
- `accepted_per_position`: accepted tokens per draft position (vLLM's per-position counter) and the rate;
- `refused`: parameter sets the build answered 4xx, with the count (facts about the build, not corruption).
`class_verdicts(...)` gives every bug class PASS, FAIL or INCONCLUSIVE: PASS needs the class's trigger to have run
(and, for classes that live on accepted drafts, acceptance at or above the floor).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from itertools import pairwise
from pathlib import Path
from typing import Any

from eval.canary.records import ProbeRecord


def size_bucket(n: int) -> str:
    return "1" if n <= 1 else "2-3" if n <= 3 else "4-7" if n <= 7 else "8-16"


def _tags(rec: ProbeRecord) -> list[str]:
    tags = [t.split("=")[0] for t in rec.extra.get("features") or []]
    return tags or ["plain"]


def features_by_concurrency(records: Sequence[ProbeRecord]) -> dict[str, dict[str, int]]:
    table: dict[str, Counter[str]] = {}
    for r in records:
        bucket = size_bucket(int(r.extra.get("case_requests") or 1))
        for tag in _tags(r):
            table.setdefault(tag, Counter())[bucket] += 1
    return {k: dict(sorted(v.items())) for k, v in sorted(table.items())}


def drafts_per_step(metrics: Sequence[dict[str, Any]], spec_tokens: int) -> dict[str, Any]:
    """Per /metrics window: draft tokens per drafting request; windows with fewer than K drafts per request."""
    hist: Counter[str] = Counter()
    below = 0
    snaps = [m for m in metrics if m.get("spec_decode_num_drafts") is not None and not m.get("errors")]
    for a, b in pairwise(snaps):
        drafts = (b["spec_decode_num_drafts"] or 0) - (a["spec_decode_num_drafts"] or 0)
        tokens = (b["spec_decode_num_draft_tokens"] or 0) - (a["spec_decode_num_draft_tokens"] or 0)
        if drafts <= 0 or tokens < 0:
            continue
        per = tokens / drafts
        hist[f"{per:.1f}"] += 1
        below += per < spec_tokens - 1e-9
    return {"windows": sum(hist.values()), "histogram": dict(sorted(hist.items())), "windows_below_k": below}


_ITERATION = re.compile(
    r"Iteration\((\d+)\): (\d+) context requests, (\d+) context tokens, (\d+) generation requests, "
    r"(\d+) generation tokens, iteration elapsed time: [0-9.]+ ms(?! \(dummy\))"
)


def steps_from_logs(cohort_dir: Path, spec_tokens: int) -> dict[str, Any] | None:
    """Exact per-step counts from vLLM's `--enable-logging-iteration-details` lines in the cohort's server logs.

    A decoding ("generation") request schedules 1 + its drafts, so a step's drafts = generation tokens minus
    generation requests. A step whose drafts are not a multiple of its requests mixed draft counts for certain;
    a step with fewer than K drafts per request had some trimmed or withheld."""
    hist: Counter[str] = Counter()
    steps = below = mixed = 0
    for log in sorted((Path(cohort_dir) / "logs").glob("*.log")):
        for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
            m = _ITERATION.search(line)
            if m is None or int(m.group(4)) == 0:
                continue
            reqs, tokens = int(m.group(4)), int(m.group(5))
            drafts = tokens - reqs
            steps += 1
            hist[f"{reqs} req, {drafts} drafts"] += 1
            below += drafts < reqs * spec_tokens
            mixed += reqs > 1 and drafts % reqs != 0
    if not steps:
        return None
    full = dict(hist.most_common())  # bounded: at most max_num_seqs x (K + 1) keys; the plot needs the rare ones
    return {"decode_steps": steps, "steps_below_k": below, "steps_mixing_draft_counts": mixed, "histogram": full}


def accepted_per_position(metrics: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    from store.acceptance import acceptance

    found = acceptance(list(metrics))
    return None if found is None else found.as_dict()


def refused(records: Sequence[ProbeRecord]) -> dict[str, int]:
    out: Counter[str] = Counter()
    for r in records:
        if r.extra.get("refused"):
            keys = sorted(k for k in (r.params or {}) if k not in ("max_tokens", "temperature", "logprobs"))
            out[f"{', '.join(keys) or '(none)'}: {str(r.extra['refused'])[:120]}"] += 1
    return dict(out.most_common())


def fuzz_coverage(
    records: Sequence[ProbeRecord],
    metrics: Sequence[dict[str, Any]],
    spec_tokens: int,
    cohort_dir: Path | None = None,
) -> dict[str, Any]:
    fuzz = [r for r in records if r.mode == "fuzz"]
    chunks: Counter[int] = Counter(c for r in fuzz for c in r.extra.get("chunk_tokens") or [])
    return {
        "cases": len({r.index for r in fuzz}),
        "requests": len(fuzz),
        "answered": sum(1 for r in fuzz if r.output_token_ids is not None),
        "features_by_concurrency": features_by_concurrency(fuzz),
        "tokens_per_step": {str(k): chunks[k] for k in sorted(chunks)},
        "drafts_per_step": drafts_per_step(metrics, spec_tokens),
        "steps": steps_from_logs(cohort_dir, spec_tokens) if cohort_dir is not None else None,
        "accepted_per_position": accepted_per_position(metrics),
        "refused": refused(fuzz),
    }


# Bug classes the canary vouches for: (name, feature tags that trigger it, needs accepted drafts).
CLASSES: tuple[tuple[str, tuple[str, ...], bool], ...] = (
    (
        "logits processors on draft rows (penalties, min_tokens, bad words, allowed ids: PR 19482, 32642)",
        ("penalties", "repetition_penalty", "min_tokens", "bad_words", "allowed_token_ids", "logit_bias"),
        True,
    ),
    (
        "request features off batch row 0, beside another request's drafts (PR 31908)",
        ("joined",),
        True,
    ),
    ("stop strings completed inside a multi-token step (PR 47616)", ("derived:stop", "stop"), True),
    ("logprobs of accepted drafts (PR 30846)", ("plain", "penalties", "repetition_penalty", "logit_bias"), True),
    (
        "structured output on draft rows",
        (
            "structured:json",
            "structured:regex",
            "structured:choice",
            "structured:grammar",
            "structured:response_format",
            "structured:derived_regex",
        ),
        True,
    ),
    ("random-sampling path of the rejection sampler", ("sampled",), True),
    ("top-k / top-p of sampled requests on draft rows (PR 10198)", ("sampled_top_k",), True),
    ("state after a prefix-cache hit (one-token and short tails: PR 55178)", ("shared_prefix",), False),
    ("mixed draft counts in one step (short max_tokens, finishing requests)", ("short_max_tokens",), True),
    ("client aborts mid-stream", ("abort",), False),
)
# Classes that only a server with a reasoning parser (`model.reasoning_parser`) can show: vouched for there only.
REASONING_CLASSES: tuple[tuple[str, tuple[str, ...], bool], ...] = (
    (
        "structured output after the end of reasoning inside drafts (vLLM issue 31858, PR 44993)",
        ("reasoning:open",),
        True,
    ),
    ("thinking token budget forced inside a speculative step", ("thinking_budget",), True),
)


def class_verdicts(
    records: Sequence[ProbeRecord], acceptance: float | None, floor: float, reasoning_parser: bool = False
) -> dict[str, dict[str, str]]:
    """Per bug class: FAIL (a corrupted request carried its trigger), PASS, or INCONCLUSIVE with the reason; the
    REASONING_CLASSES too where the server runs a reasoning parser."""
    fuzz = [r for r in records if r.mode == "fuzz" and r.output_token_ids is not None and not r.extra.get("refused")]
    out: dict[str, dict[str, str]] = {}
    for name, triggers, needs_drafts in CLASSES + (REASONING_CLASSES if reasoning_parser else ()):
        hit = [r for r in fuzz if set(_tags(r)) & set(triggers)]
        if "shared_prefix" in triggers:  # the trigger is the cache hit itself, not the request's shape
            hit = [r for r in hit if (r.cached_tokens or 0) > 0]
        bad = [r for r in hit if (r.judgement or {}).get("verdict") == "corrupted"]
        if bad:
            out[name] = {"verdict": "FAIL", "reason": f"{len(bad)}/{len(hit)} triggering requests corrupted"}
        elif not hit:
            out[name] = {"verdict": "INCONCLUSIVE", "reason": "its trigger never ran (no answered request had it)"}
        elif needs_drafts and (acceptance is None or acceptance < floor):
            seen = "unknown" if acceptance is None else f"{acceptance:.2f}"
            out[name] = {
                "verdict": "INCONCLUSIVE",
                "reason": f"draft acceptance {seen} < {floor}: too few drafts kept to vouch for it",
            }
        else:
            out[name] = {"verdict": "PASS", "reason": f"{len(hit)} triggering requests, none corrupted"}
    return out
