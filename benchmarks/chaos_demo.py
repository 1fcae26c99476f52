"""Chaos run of the CPU demo (reliability suite, not CI): random kills during `specqual run cohorts/demo-cpu.yaml`,
then the table compared with an uninterrupted run of the same commit.

Kills come from a fixed seed: a bounded list of kinds (at least 6; by default the driver with its process group
twice, an API server, two vLLM workers (engine core processes) and a bwrap sandbox, in a seeded order), each at a
seeded moment (a uniform gap after the previous kill or restart). Only processes this script started are killed:
the driver and its descendants, found through /proc (a server, a worker or a sandbox is a descendant of the
driver; a target is picked among those present with the same seeded generator). After a driver kill the driver is
started again with the same `--run-id` (a resume); a killed server or worker is the stack watchdog's to restart.
When the schedule is done, the driver runs to its end, then is resumed until no infra error is left (at most
`--max-resumes` times). The result, `<run>/chaos.json`, holds the kills, each session's exit code and the
per-cohort comparison with `--baseline` (verdict, resolved, graded, infra failures); the exit code is 0 only if
every cohort matches and no infra error is left.

    /work/coord/vslot .venv/bin/python benchmarks/chaos_demo.py --run-id demo-chaos1 --baseline results/demo-fresh1
    .venv/bin/python benchmarks/chaos_demo.py --run-id demo-chaos1 --baseline results/demo-fresh1 --compare-only

Run it under the machine's vLLM slot lock (it starts up to 4 vLLM servers at a time, as the demo does).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
KINDS = ("driver", "api_server", "worker", "sandbox")
DEFAULT_PLAN = ("driver", "driver", "api_server", "worker", "worker", "sandbox")


def log(msg: str) -> None:
    print(f"[chaos {time.strftime('%H:%M:%S')}] {msg}", flush=True)


def processes() -> dict[int, tuple[int, str, str]]:
    """pid -> (ppid, comm, cmdline) of every process readable in /proc."""
    out = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
            comm = stat[stat.index("(") + 1 : stat.rindex(")")]
            ppid = int(stat[stat.rindex(")") + 2 :].split()[1])
            cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
        except (OSError, ValueError, IndexError):
            continue
        out[int(d.name)] = (ppid, comm, cmd)
    return out


def descendants(root: int, table: dict[int, tuple[int, str, str]]) -> list[int]:
    children: dict[int, list[int]] = {}
    for pid, (ppid, _, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    out, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return sorted(out)


def is_kind(kind: str, pid: int, table: dict[int, tuple[int, str, str]]) -> bool:
    ppid, comm, cmd = table[pid]
    if kind == "api_server":
        return "vllm.entrypoints.openai.api_server" in cmd or " vllm serve" in f" {cmd}"
    if kind == "worker":  # vLLM's engine core / worker processes (setproctitle VLLM::...)
        return comm.startswith("VLLM::") or cmd.startswith("VLLM::") or "EngineCore" in cmd
    if kind == "sandbox":  # the outermost bwrap of a sandbox (bwrap forks itself)
        return comm == "bwrap" and table.get(ppid, (0, "", ""))[1] != "bwrap"
    return False


class Driver:
    """`specqual run COHORT_FILE --run-id RUN_ID` in its own process group; started again to resume."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.proc: subprocess.Popen[bytes] | None = None
        self.sessions: list[dict[str, Any]] = []
        self.log_path = Path(args.results) / f"{args.run_id}.chaos-driver.log"

    def start(self) -> None:
        argv = [str(ROOT / ".venv/bin/specqual"), "run", self.args.cohort_file, "--run-id", self.args.run_id]
        argv += ["--results", self.args.results] if self.args.results != "results" else []
        argv += [x for o in self.args.override for x in ("-c", o)]
        with open(self.log_path, "ab") as out:
            out.write(f"\n=== chaos: session {len(self.sessions) + 1} {time.strftime('%H:%M:%S')}\n".encode())
            self.proc = subprocess.Popen(argv, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        self.sessions.append({"started": time.time(), "pid": self.proc.pid, "exit": None})
        log(f"driver session {len(self.sessions)} started (pid {self.proc.pid})")

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def wait(self, timeout: float | None = None) -> int:
        assert self.proc is not None
        code = self.proc.wait(timeout)
        self.sessions[-1]["exit"] = code
        self.sessions[-1]["ended"] = time.time()
        return code

    def kill_group(self) -> None:
        assert self.proc is not None
        os.killpg(self.proc.pid, signal.SIGKILL)  # the driver's own process group: the driver and its threads' children
        self.wait(60)
        self.sessions[-1]["killed"] = True


def pick_target(kind: str, driver: Driver, rng: random.Random, wait_s: float) -> int | None:
    """A process of `kind` under the driver, waiting up to `wait_s` for one to exist."""
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline and driver.alive():
        assert driver.proc is not None
        table = processes()
        found = [p for p in descendants(driver.proc.pid, table) if p in table and is_kind(kind, p, table)]
        if found:
            return rng.choice(found)
        time.sleep(0.5)
    return None


def unit_counts(run_dir: Path) -> dict[str, dict[str, int]]:
    """Per cohort: units with a verdict, infra-error verdicts, grades and infra-error grades on disk."""
    out: dict[str, dict[str, int]] = {}
    for verdict in run_dir.glob("*/units/*/r*/verdict.json"):
        cohort = verdict.parents[3].name
        row = out.setdefault(cohort, {"units": 0, "infra_units": 0, "graded": 0, "infra_grades": 0})
        row["units"] += 1
        try:
            row["infra_units"] += json.loads(verdict.read_text()).get("status") == "infra_error"
            grade = verdict.parent / "grade.json"
            if grade.is_file():
                row["graded"] += 1
                row["infra_grades"] += json.loads(grade.read_text()).get("status") == "infra_error"
        except (OSError, ValueError):
            pass
    return out


def table(run_dir: Path) -> dict[str, dict[str, Any]]:
    summary = json.loads((run_dir / "summary.json").read_text())
    keys = ("verdict", "resolved", "graded", "units", "infra_failures")
    return {name: {k: c.get(k) for k in keys} for name, c in sorted(summary["cohorts"].items())}


def compare(run_dir: Path, baseline: Path) -> dict[str, Any]:
    mine, base = table(run_dir), table(baseline)
    rows, same = {}, set(mine) == set(base)
    for name in sorted(set(mine) | set(base)):
        a, b = mine.get(name, {}), base.get(name, {})
        match = all(a.get(k) == b.get(k) for k in ("verdict", "resolved", "graded")) and not a.get("infra_failures")
        same = same and match
        rows[name] = {"chaos": a, "baseline": b, "match": match}
    left = unit_counts(run_dir)
    no_infra = all(r["infra_units"] == 0 and r["infra_grades"] == 0 for r in left.values())
    return {"match": same and no_infra, "no_infra_left": no_infra, "cohorts": rows, "units_on_disk": left}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cohort-file", default="cohorts/demo-cpu.yaml")
    p.add_argument("--run-id", required=True)
    p.add_argument("--results", default="results")
    p.add_argument("--baseline", type=Path, help="the uninterrupted run directory of the same commit")
    p.add_argument("-c", dest="override", action="append", default=[], help="a cohort-file override for the run")
    p.add_argument("--seed", type=int, default=20261204)
    p.add_argument("--plan", default=",".join(DEFAULT_PLAN), help="kinds to kill, comma-separated (shuffled)")
    p.add_argument("--min-gap", type=float, default=45.0, help="seconds after the previous kill or restart")
    p.add_argument("--max-gap", type=float, default=150.0)
    p.add_argument("--target-wait", type=float, default=180.0, help="seconds to wait for a target to exist")
    p.add_argument("--max-resumes", type=int, default=3)
    p.add_argument("--compare-only", action="store_true", help="only compare an existing chaos run")
    args = p.parse_args(argv)
    run_dir = ROOT / args.results / args.run_id
    if args.compare_only:
        result = compare(run_dir, args.baseline)
        print(json.dumps(result, indent=2))
        return 0 if result["match"] else 1
    plan = [k.strip() for k in args.plan.split(",") if k.strip()]
    if len(plan) < 6 or set(plan) != set(KINDS) or any(k not in KINDS for k in plan):
        p.error(f"the plan needs at least 6 kills covering {', '.join(KINDS)}")
    rng = random.Random(args.seed)
    rng.shuffle(plan)
    log(f"seed {args.seed}: kill plan {plan}")
    driver = Driver(args)
    kills: list[dict[str, Any]] = []
    t0 = time.time()
    driver.start()
    for kind in plan:
        gap = rng.uniform(args.min_gap, args.max_gap)
        try:
            ended = driver.wait(gap)
        except subprocess.TimeoutExpired:
            ended = None
        if ended is not None:  # the run finished (or failed) before this kill: the rest of the plan is not run
            log(f"the driver ended before the {kind} kill (exit {ended}); {len(plan) - len(kills)} kills not done")
            break
        record: dict[str, Any] = {"kind": kind, "at_s": round(time.time() - t0, 1), "gap_s": round(gap, 1)}
        if kind == "driver":
            record["pid"] = driver.proc.pid if driver.proc else None
            record["units_before"] = unit_counts(run_dir)
            driver.kill_group()
            log(f"killed the driver's process group (pid {record['pid']}); resuming")
            time.sleep(5)  # the reapers stop the servers
            driver.start()
        else:
            target = pick_target(kind, driver, rng, args.target_wait)
            if target is None:
                record["skipped"] = f"no {kind} process under the driver within {args.target_wait:g} s"
                log(record["skipped"])
            else:
                record["pid"] = target
                record["cmd"] = processes().get(target, (0, "", ""))[2][:200]
                os.kill(target, signal.SIGKILL)
                log(f"killed {kind} pid {target}: {record['cmd'][:100]}")
        kills.append(record)
    code = driver.sessions[-1]["exit"] if driver.sessions[-1]["exit"] is not None else driver.wait()
    log(f"driver session {len(driver.sessions)} ended (exit {code})")
    for _ in range(args.max_resumes):
        left = unit_counts(run_dir)
        if code == 0 and all(r["infra_units"] == 0 and r["infra_grades"] == 0 for r in left.values()):
            break
        infra = {c: r for c, r in left.items() if r["infra_units"] or r["infra_grades"]}
        log(f"resuming (exit {code}; infra left: {infra})")
        driver.start()
        code = driver.wait()
    result: dict[str, Any] = {
        "schema_version": 1,
        "seed": args.seed,
        "plan": plan,
        "kills": kills,
        "kills_done": sum(1 for k in kills if "skipped" not in k),
        "sessions": driver.sessions,
        "wall_s": round(time.time() - t0, 1),
        "final_exit": code,
        "baseline": str(args.baseline) if args.baseline else None,
    }
    if args.baseline is not None and (run_dir / "summary.json").is_file():
        result["comparison"] = compare(run_dir, args.baseline)
    (run_dir / "chaos.json").write_text(json.dumps(result, indent=2) + "\n")
    log(f"wrote {run_dir / 'chaos.json'}")
    print(json.dumps({k: result[k] for k in ("kills_done", "final_exit", "wall_s")}, indent=2))
    if "comparison" in result:
        for name, row in result["comparison"]["cohorts"].items():
            print(
                f"{name}: chaos {row['chaos']} | baseline {row['baseline']} | {'same' if row['match'] else 'DIFFERS'}"
            )
        return 0 if result["comparison"]["match"] and result["kills_done"] >= 6 else 1
    return 0 if code == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
