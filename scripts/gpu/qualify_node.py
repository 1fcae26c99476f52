"""The GPU qualification on one node, driven by `qualify-on-node.sh`: all cohorts' servers at once, then the canary.

Why not `specqual run`: its canary starts at most two stacks at a time, and four cold vLLM starts with CUDA
graphs (170-191 s each on an H200) one after another do not fit one 10-minute job. Here every cohort's stack
starts concurrently through `eval.stacks.launch` (one context manager per cohort), every stack is probed at
the same time through `eval.canary.run.probe_endpoint`, and `eval.canary.results.compare_and_summarize`
compares and writes the usual records, so the run directory is the same as `specqual run` writes.

Also measured and written to `<run>/timings.json`: cold start of each server, a warm restart (compile caches
filled) unless `--no-warm` or the time budget is spent, probing wall time, probes per minute and speculative
acceptance (from `/metrics` before and after the canary). `--dry-run` stops before any server starts.

`--rollouts` then runs the SWE-bench workload's agent rollouts on every cohort that has it, all stacks at once
(`eval.rollout.run.run_rollouts`, the function `specqual rollout` runs), with `/metrics` recorded around them.
They are not graded here: the node has no grader (no swebench, and a local task set's tests want the CPU machine's
sandbox anyway), so the run directory comes back ungraded and `specqual grade`, `specqual classify` and
`specqual report` finish it where it is read. The task set is generated on the node the way it is here
(fixed commit dates), so the graded base commits are the same.

    python scripts/gpu/qualify_node.py --env /tmp/sq/vllm-env --results /tmp/sq/results --run-id h200
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from eval.spec.load import LoadedSpec, load_spec  # noqa: E402
from eval.store import atomic_write_json  # noqa: E402
from eval.store.run import RunDir, now, open_run  # noqa: E402

COHORT_FILE = REPO / "cohorts" / "pr55178-backport-h200.yaml"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--env", type=Path, help="environment made by `specqual stack unpack` (default: pip builds)")
    p.add_argument("--results", type=Path, required=True, help="results root; the run goes to RESULTS/RUN_ID")
    p.add_argument("--run-id", default=None)
    p.add_argument("--cohort-file", type=Path, default=COHORT_FILE)
    p.add_argument("--bundle", type=Path, help="bundle directory: its manifest is kept as <run>/bundle.json")
    p.add_argument("--nixl", type=Path, help="slim NIXL directory (scripts/gpu/slim_nixl.py): kept as <run>/nixl.json")
    p.add_argument("--no-warm", action="store_true", help="skip the warm restart")
    p.add_argument("--rollouts", action="store_true", help="after the canary, the agent rollouts (ungraded)")
    p.add_argument("--repeats", type=int, default=1, help="probe the same stacks N times (runs RUN_ID, RUN_ID-r2..)")
    p.add_argument("--budget-s", type=float, default=480, help="no warm restart once this many seconds have passed")
    p.add_argument("--dry-run", action="store_true", help="builds, model and cohort records only; start nothing")
    p.add_argument("--cohorts", help="comma-separated cohort names: start and probe only these (default: all)")
    p.add_argument("-c", "--config", action="append", default=[], help="more key.path=value overrides")
    return p.parse_args(argv)


def load(args: argparse.Namespace) -> LoadedSpec:
    """The cohort file; with --env both builds use the unpacked environment instead of `pip: vllm==0.26.0`."""
    overrides: list[str] = []
    if args.env is not None:
        spec = load_spec([str(args.cohort_file)]).spec
        for name in spec.builds:
            overrides += [f"builds.{name}.pip=null", f"builds.{name}.env={args.env.resolve()}"]
    loaded = load_spec([str(args.cohort_file), *overrides, *args.config])
    if not args.cohorts:
        return loaded
    wanted = [n.strip() for n in args.cohorts.split(",") if n.strip()]
    unknown = sorted(set(wanted) - {c.name for c in loaded.cohorts})
    if unknown:
        raise SystemExit(
            f"--cohorts: no cohort {', '.join(unknown)} (cohorts: {', '.join(c.name for c in loaded.cohorts)})"
        )
    picked = dataclasses.replace(loaded, cohorts=[c for c in loaded.cohorts if c.name in wanted])
    if any(c.runs("canary") for c in picked.cohorts):
        from eval.spec.errors import SpecError
        from eval.spec.matrix import canary_reference

        try:  # the canary compares against its reference: it must be started too (before anything starts)
            canary_reference(picked.spec, picked.cohorts)
        except SpecError as e:
            raise SystemExit(
                f"--cohorts: {e}; add it, or name another with -c workloads.canary.reference=NAME"
            ) from None
    return picked


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def timed(fn: Any, *a: Any) -> tuple[Any, float]:
    t0 = time.monotonic()
    out = fn(*a)
    return out, round(time.monotonic() - t0, 1)


def start_all(loaded: LoadedSpec, builds: dict[str, Any], model: Path, run_dir: Path) -> dict[str, Any]:
    """Start every cohort's stack at once; {cohort: (stack, seconds to ready)}. One failure stops them all."""
    from eval.stacks import launch

    stacks = {c.name: launch(loaded.spec, c, model, run_dir, builds[c.factors["build"]]) for c in loaded.cohorts}
    with ThreadPoolExecutor(len(stacks)) as pool:
        futures = {name: pool.submit(timed, s.__enter__) for name, s in stacks.items()}
    started: dict[str, Any] = {}
    errors = []
    for name, fut in futures.items():
        try:
            started[name] = (stacks[name], fut.result()[1])
        except Exception as e:  # every stack's failure is reported, and the others are stopped
            errors.append(f"{name}: {e}")
    if errors:
        stop_all({n: s for n, (s, _) in started.items()})
        raise SystemExit("stack start failed:\n" + "\n".join(errors))
    return started


def stop_all(stacks: dict[str, Any]) -> None:
    with ThreadPoolExecutor(max(len(stacks), 1)) as pool:
        list(pool.map(lambda s: s.__exit__(None, None, None), stacks.values()))


def probe_one(loaded: LoadedSpec, run: RunDir, name: str, stack: Any, model: Path, progress: Any) -> float:
    from eval.canary.run import canary_config, make_book, probe_endpoint
    from eval.stacks.metrics import MetricsRecorder

    cfg = canary_config(loaded)
    book = make_book(cfg, model, stack.base_url, loaded.spec.model.served_name)
    recorder = MetricsRecorder(stack.metrics_urls, run.cohort_dir(name) / "metrics.jsonl")
    t0 = time.monotonic()
    with recorder.around("canary", every_s=30):
        probe_endpoint(loaded, name, stack.base_url, run.cohort_dir(name), book, progress)
    return round(time.monotonic() - t0, 1)


def probe_all(loaded: LoadedSpec, run: RunDir, stacks: dict[str, Any], model: Path) -> dict[str, float]:
    """Probe every stack at the same time (each server is its own batch); {cohort: probing seconds}."""
    from rich.console import Console

    from eval.canary.progress import CanaryProgress
    from eval.canary.run import canary_config, total

    with CanaryProgress(Console(stderr=True), list(stacks), total(canary_config(loaded))) as progress:
        for name in stacks:
            progress.status(name, "probing")
        with ThreadPoolExecutor(len(stacks)) as pool:
            futures = {n: pool.submit(probe_one, loaded, run, n, s, model, progress) for n, s in stacks.items()}
        return {n: f.result() for n, f in futures.items()}


def rollouts_all(loaded: LoadedSpec, run: RunDir, stacks: dict[str, Any]) -> dict[str, Any]:
    """Every swebench cohort's rollouts against its running stack, all at once; {cohort: counts}."""
    import asyncio

    from eval.rollout.progress import RolloutProgress
    from eval.rollout.run import check_workload, run_rollouts
    from eval.rollout.stopper import write_order
    from eval.stacks.metrics import MetricsRecorder
    from eval.tasks.load import load_tasks

    workload = check_workload(loaded)
    tasks, load_s = timed(load_tasks, workload, loaded.spec.base_dir)
    names = [n for n in stacks if loaded.cohort(n).runs("swebench")]
    # Every unit runs (no early stop here); the order the sequential test reads them in is recorded as
    # `specqual run` records it, so the report says where the test would have stopped.
    write_order(run.path, [t.instance_id for t in tasks])
    log(f"rollouts: {len(tasks)} instances (generated in {load_s} s) x {workload.repeats} on {', '.join(names)}")

    async def one(name: str, view: RolloutProgress) -> Any:
        recorder = MetricsRecorder(stacks[name].metrics_urls, run.cohort_dir(name) / "metrics.jsonl")
        with recorder.around("swebench", every_s=60):
            return await run_rollouts(loaded, run, loaded.cohort(name), stacks[name].base_url, tasks, progress=view)

    async def every() -> list[Any]:
        with RolloutProgress() as view:
            return await asyncio.gather(*(one(n, view) for n in names))

    counts = {c.cohort: {**dataclasses.asdict(c), "predictions": str(c.predictions)} for c in asyncio.run(every())}
    for name, c in counts.items():
        log(f"{name}: {c['completed']} units completed, {c['infra_errors']} infra errors, {c['wall_s']} s")
        if c["skipped"]:  # a warm node keeps its results: the same RUN_ID resumes, infra errors included
            log(f"{name}: {c['skipped']} units were done by an earlier call under this run id and did not run again")
    return counts


def acceptance(metrics_path: Path, workload: str = "canary") -> dict[str, Any]:
    """Speculative acceptance over one workload's snapshots (store.acceptance: restart-safe counter growth)."""
    from store.acceptance import acceptance as growth
    from store.atomic import read_jsonl

    found = growth([s for s in read_jsonl(metrics_path) if s.get("workload", workload) == workload])
    if found is None:
        return {}
    out: dict[str, Any] = {"drafts": found.drafts, "draft_tokens": found.draft_tokens}
    out["accepted_tokens"] = found.accepted_tokens
    if found.rate is not None:
        out["acceptance_rate"] = round(found.rate, 4)
    if found.mean_acceptance_length is not None:
        out["mean_acceptance_length"] = round(found.mean_acceptance_length, 3)
    if found.per_position:
        out["per_position_rate"] = [round(r, 4) for r in found.per_position_rate]
    return out


def is_pd(stack: Any) -> bool:
    return any(p.role in ("prefill", "decode") for p in getattr(stack, "procs", []))


def pd_before(loaded: LoadedSpec, run: RunDir, stacks: dict[str, Any]) -> None:
    """P/D stacks: which GPU runs which worker (`<run>/placement.json`), and one request through each router."""
    if not any(is_pd(s) for s in stacks.values()):
        return
    from pd_checks import gpu_placement, smoke_request

    placement = gpu_placement(stacks)
    atomic_write_json(run.path / "placement.json", placement)
    workers = [(a["cohort"], a["worker"]) for a in placement["processes"]]
    log(f"GPUs used: {placement['gpus_used']}; processes: {workers}")
    failed = 0
    served = loaded.spec.model.served_name
    with ThreadPoolExecutor(len(stacks)) as pool:
        replies = pool.map(lambda st: smoke_request(st.base_url, served), stacks.values())
        smokes = dict(zip(stacks, replies, strict=True))
    for name, smoke in smokes.items():
        atomic_write_json(run.cohort_dir(name) / "smoke.json", {"schema_version": 1, **smoke})
        log(f"{name}: one P/D request: {smoke}")
        failed += "error" in smoke
    if failed == len(stacks):  # no stack serves through its router: the canary would only time out
        raise SystemExit("no P/D stack answered one request; see <run>/<cohort>/logs")


def pd_after(run: RunDir, stacks: dict[str, Any]) -> None:
    """P/D stacks: each worker's cache/transfer/speculation counters, and what the decode side computed."""
    from pd_checks import tail_summary, worker_metrics

    for name, stack in stacks.items():
        if is_pd(stack):
            worker_metrics(stack, run.cohort_dir(name) / "worker-metrics.txt")
            log(f"{name}: decode-side prompt tokens computed (prompt - cached): {tail_summary(run.cohort_dir(name))}")


def prepare(args: argparse.Namespace, loaded: LoadedSpec, run: RunDir) -> tuple[Path, dict[str, Any], dict[str, Any]]:
    """Model (generated here), cohort records, both builds' overlays; returns (model, builds, timings)."""
    from eval.pipeline import write_cohorts
    from eval.stacks import ensure_build
    from eval.stacks.models import model_dir
    from eval.stacks.provenance import gpu_inventory

    model, gen_s = timed(model_dir, loaded.spec)
    log(f"model {model} ({gen_s} s)")
    write_cohorts(loaded, run, str(model))
    builds, build_s = timed(lambda: {n: ensure_build(loaded.spec, n) for n in loaded.spec.builds})
    for name, b in builds.items():
        log(f"build {name}: vllm {b.vllm_version} wheel {b.wheel_sha256} patched {b.patched_files}")
    if args.bundle is not None and (args.bundle / "manifest.json").is_file():
        manifest = json.loads((args.bundle / "manifest.json").read_text())
        atomic_write_json(run.path / "bundle.json", {"schema_version": 1, **manifest})
    if args.nixl is not None and (args.nixl / "manifest.json").is_file():
        atomic_write_json(run.path / "nixl.json", json.loads((args.nixl / "manifest.json").read_text()))
    timings = {"schema_version": 1, "model_generation_s": gen_s, "builds_s": build_s, "gpus": gpu_inventory()}
    return model, builds, timings


def repeat_probes(
    args: argparse.Namespace, loaded: LoadedSpec, run: RunDir, stacks: dict[str, Any], model: Path
) -> None:
    """Probe the running stacks again, each time into its own run (false-alarm counts over repeated runs)."""
    from eval.canary.results import compare_and_summarize
    from eval.pipeline import write_cohorts

    for r in range(2, args.repeats + 1):
        again = open_run(loaded, args.results, f"{run.path.name}-r{r}")
        write_cohorts(loaded, again, str(model))
        walls = probe_all(loaded, again, stacks, model)
        for n, s in compare_and_summarize(loaded, again, walls).items():
            log(f"repeat {r}: {n}: {s.verdict}: {s.reason}")
        again.mark(ended_at=now())


def qualify(args: argparse.Namespace, loaded: LoadedSpec, run: RunDir, t_start: float) -> dict[str, Any]:
    from eval.canary.results import compare_and_summarize
    from eval.canary.run import canary_config, total

    model, builds, timings = prepare(args, loaded, run)
    if args.dry_run:
        return timings
    log(f"starting {len(loaded.cohorts)} stacks at once")
    started = start_all(loaded, builds, model, run.path)
    timings["cold_start_s"] = {n: s for n, (_, s) in started.items()}
    log(f"ready: {timings['cold_start_s']}")
    stacks = {n: st for n, (st, _) in started.items()}
    try:
        pd_before(loaded, run, stacks)
        walls, probe_s = timed(probe_all, loaded, run, stacks, model)
        if args.rollouts:
            timings["rollouts"], timings["rollouts_s"] = timed(rollouts_all, loaded, run, stacks)
        pd_after(run, stacks)
        repeat_probes(args, loaded, run, stacks, model)
    finally:
        stop_all(stacks)
    summaries = compare_and_summarize(loaded, run, walls)
    probes = total(canary_config(loaded)) * len(stacks)
    timings |= {"probe_wall_s": walls, "probing_s": probe_s, "probes": probes}
    timings["probes_per_min"] = round(probes / probe_s * 60, 1) if probe_s else None
    timings["acceptance"] = {n: acceptance(run.cohort_dir(n) / "metrics.jsonl") for n in stacks}
    if args.rollouts:
        timings["rollout_acceptance"] = {
            n: acceptance(run.cohort_dir(n) / "metrics.jsonl", "swebench") for n in timings["rollouts"]
        }
    timings["verdicts"] = {n: {"verdict": s.verdict, "reason": s.reason} for n, s in summaries.items()}
    for n, s in summaries.items():
        log(f"{n}: {s.verdict}: {s.reason}")
    if args.no_warm or time.monotonic() - t_start > args.budget_s:
        log("warm restart skipped")
        return timings
    warm = start_all(loaded, builds, model, args.results / f"{run.path.name}-warm")
    timings["warm_start_s"] = {n: s for n, (_, s) in warm.items()}
    stop_all({n: st for n, (st, _) in warm.items()})
    log(f"warm restart ready: {timings['warm_start_s']}")
    return timings


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    t_start = time.monotonic()
    loaded = load(args)
    run = open_run(loaded, args.results, args.run_id)
    log(f"run {run.path}: cohorts {', '.join(c.name for c in loaded.cohorts)}")
    timings = qualify(args, loaded, run, t_start)
    timings["total_s"] = round(time.monotonic() - t_start, 1)
    atomic_write_json(run.path / "timings.json", timings)
    run.mark(ended_at=now())
    log(f"done in {timings['total_s']} s: {run.path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
