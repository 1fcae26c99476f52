"""The `fuzz` canary mode: generated cases against one stack until the time budget or the case cap ends.

Case i is the same on every cohort (seed + index; the parameter space is read once per run from the first
served build and kept in `<run>/fuzz-space.json`; output-guided parameters are filled by the first cohort that
runs the case and the resolved case is kept in `<run>/fuzz-cases/`, so every cohort gets the same requests). Records are
`<cohort>/probes/fuzz-<i>-<role>.json`; the comparison with the reference and the oracles run afterwards
(eval/canary/results.py), on the cases both sides finished.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from eval.canary.client import HEALTH_WAIT_S, wait_healthy
from eval.canary.fuzz.derive import resolve, store, stored
from eval.canary.fuzz.execute import records_of, run_case_async
from eval.canary.fuzz.generate import GenContext, generate_case
from eval.canary.fuzz.space import ParamSpace, fields_of, space_from_openapi
from eval.canary.prompts import PromptBook
from eval.canary.records import ProbeRecord, read_records, write_record
from eval.spec.models import CanaryWorkload

SPACE_FILE = "fuzz-space.json"


def stack_facts(loaded: Any) -> dict[str, Any]:
    """What the generator needs from the cohort file: K, token budget, max_model_len, parsers."""
    cohorts = [c for c in loaded.cohorts if c.runs("canary")]
    ks = [c.speculative.num_speculative_tokens or 0 for c in cohorts]
    args = loaded.spec.server.args
    model = loaded.spec.model
    return {
        "spec_tokens": max([k for k in ks if k] or [5]),
        "token_budget": args.get("max_num_batched_tokens"),
        "max_model_len": model.max_model_len or 2048,
        "tool_parser": bool(model.tool_call_parser),
        "reasoning_parser": bool(model.reasoning_parser),
    }


def load_space(run_path: Path, base_url: str) -> ParamSpace:
    """The run's parameter space: read once from the first served build, then reused by every cohort."""
    path = Path(run_path) / SPACE_FILE
    if path.is_file():
        doc = json.loads(path.read_text(encoding="utf-8"))
        return ParamSpace(fields_of(doc["completions"]), fields_of(doc["chat"]), doc["source"])
    try:
        doc = _openapi(base_url)
    except Exception as e:  # a server without /openapi.json still gets greedy cases
        return ParamSpace(source=f"unavailable: {type(e).__name__}: {e}"[:200])
    schemas = doc["components"]["schemas"]
    keep = {
        "source": f"{base_url}/openapi.json",
        "completions": schemas.get("CompletionRequest", {}),
        "chat": schemas.get("ChatCompletionRequest", {}),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(keep), encoding="utf-8")
    return ParamSpace(fields_of(keep["completions"]), fields_of(keep["chat"]), keep["source"])


def _openapi(base_url: str) -> dict[str, Any]:
    import httpx

    resp = httpx.get(base_url.rstrip("/") + "/openapi.json", timeout=60)
    resp.raise_for_status()
    doc: dict[str, Any] = resp.json()
    space_from_openapi(doc)  # raises without a CompletionRequest schema
    return doc


def gen_context(
    cfg: CanaryWorkload, book: PromptBook, space: ParamSpace, facts: dict[str, Any], device: str
) -> GenContext:
    """The generator's view of the run; `device` is the servers' (`server.device`): some features are off on CPU
    unless the file includes them (CanaryWorkload.fuzz_feature_set)."""
    return GenContext(
        book=book,
        space=space,
        block_size=cfg.block_size,
        logprobs=max(cfg.logprobs, 1),
        max_tokens=cfg.max_tokens,
        max_requests=cfg.fuzz_max_concurrency,
        features=cfg.fuzz_feature_set(device),
        adapters=tuple(cfg.fuzz_lora_adapters),
        control_actions=tuple(cfg.fuzz_control_actions or ()),
        **facts,
    )


def cases_done(out_dir: Path) -> set[int]:
    """Case indices with records on disk and no infra error (a killed run resumes after them)."""
    recs = read_records(out_dir)
    bad = {r.index for r in recs.values() if r.mode == "fuzz" and r.infra_error is not None}
    return {r.index for r in recs.values() if r.mode == "fuzz"} - bad


async def fuzz_cohort(
    gen: GenContext,
    cfg: CanaryWorkload,
    base_url: str,
    model: str,
    cohort: str,
    out_dir: Path,
    rescore: bool = False,
    record_extra: dict[str, Any] | None = None,
) -> list[ProbeRecord]:
    """Run cases 0, 1, ... on one stack until `fuzz_budget_s` or `fuzz_cases`; write and return the records.
    With `rescore`, each case's greedy records are re-scored on this stack before they are written
    (eval/canary/fuzz/rescore.py). `record_extra` goes into every record's `extra` (the server's injected KV
    faults, which the oracles read)."""
    done = cases_done(out_dir)
    t0, records = time.monotonic(), []
    for index in range(cfg.fuzz_cases):
        if time.monotonic() - t0 > cfg.fuzz_budget_s:
            break
        if index in done:
            continue
        case = stored(out_dir.parent, index)  # resolved by the first cohort that ran it: the same requests
        if case is None:
            case = await resolve(generate_case(gen, cfg.seed, index), base_url, model)
            store(out_dir.parent, case)
        outcomes = await run_case_async(case, base_url, model)
        recs = records_of(case, outcomes, cohort, base_url)
        for r in recs:
            r.extra.update(record_extra or {})
        if rescore:
            from eval.canary.fuzz.rescore import rescore_greedy

            await rescore_greedy(recs, base_url, model, cfg.fuzz_rescore_nats)
        if cfg.fuzz_sampled_oracle:  # the sampled PIT oracle judges later, from what is re-scored now (stack up)
            from eval.canary.sampled.oracle import rescore_records

            await rescore_records(recs, base_url, model)
        for r in recs:
            write_record(out_dir, r)
        records += recs
        if any(r.infra_error for r in recs) and not await wait_healthy(base_url, HEALTH_WAIT_S):
            break  # the server is gone: the remaining cases would only record infra errors
    return records
