"""The GPU qualification on one node, driven by `qualify-on-node.sh`: all cohorts' servers at once, then the canary.

A caller of the pipeline (`eval.pipeline.serve_stage`, what `specqual run` runs) with every cohort's stack
started and served at once (`executor.concurrent_stacks`): four cold vLLM starts with CUDA graphs (170-191 s each
on an H200) one after another do not fit one 10-minute job. `--cohorts` is `specqual run --cohort`
(`eval.pipeline.select_cohorts`). What is the node's own: the P/D checks once every stack is up (placement,
side channels, one request, handshakes) and after the workloads, the repeated probes, and the timings.

Also measured and written to `<run>/timings.json`: cold start of each server, a warm restart (compile caches
filled) unless `--no-warm` or the time budget is spent, probing wall time, probes per minute and speculative
acceptance (store.acceptance over the canary's `/metrics` snapshots). `--dry-run` stops before any server starts.

`--rollouts` then runs the SWE-bench workload's agent rollouts on every cohort that has it, all stacks at once
(the pipeline's rollout stage, no early stop), with `/metrics` recorded around them. They are not graded here
(`workloads.swebench.grade_during_run=false`): the node has no grader (no swebench, and a local task set's tests
want the CPU machine's sandbox anyway), so the run directory comes back ungraded and `specqual grade`,
`specqual classify` and `specqual report` finish it where it is read. The task set is generated on the node the
way it is here (fixed commit dates), so the graded base commits are the same.

    python scripts/gpu/qualify_node.py --env /tmp/sq/vllm-env --results /tmp/sq/results --run-id h200
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from eval.spec.load import LoadedSpec, load_spec  # noqa: E402
from eval.store import atomic_write_json  # noqa: E402
from eval.store.run import RunDir, now, open_run  # noqa: E402
from store.cache_records import BUNDLE_MANIFEST, BundleManifest  # noqa: E402
from store.gpu_records import AcceptanceSummary, NixlManifest, NodeTimings  # noqa: E402
from store.record_io import read_record, write_record  # noqa: E402

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
    """The cohort file; with --env both builds use the unpacked environment instead of `pip: vllm==0.26.0`. Every
    selected stack starts at once (`-c executor.concurrent_stacks=N` in --config overrides it)."""
    from eval.pipeline import select_cohorts
    from eval.spec.errors import SpecError

    spec = load_spec([str(args.cohort_file)]).spec
    overrides: list[str] = ["executor.concurrent_stacks=64"]
    if args.env is not None:
        for name in spec.builds:
            overrides += [f"builds.{name}.pip=null", f"builds.{name}.env={args.env.resolve()}"]
    if spec.workloads.swebench is not None:
        overrides.append("workloads.swebench.grade_during_run=false")  # no grader on the node
    loaded = load_spec([str(args.cohort_file), *overrides, *args.config])
    wanted = [n.strip() for n in (args.cohorts or "").split(",") if n.strip()]
    try:
        return select_cohorts(loaded, wanted)
    except SpecError as e:
        raise SystemExit(f"--cohorts: {e.message}") from None


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def timed(fn: Any, *a: Any) -> tuple[Any, float]:
    t0 = time.monotonic()
    out = fn(*a)
    return out, round(time.monotonic() - t0, 1)


def serve(loaded: LoadedSpec, run: RunDir, model: Path, rollouts: bool, together: Any) -> Any:
    """The pipeline's serve stage with every stack at once: canary probes, then (with `rollouts`) the ungraded
    rollouts; `together` runs the P/D checks and the repeated probes while the stacks are up."""
    from rich.console import Console

    from eval.executors import pick
    from eval.pipeline import serve_stage

    if rollouts:  # every unit runs (no early stop); the order the sequential test reads them in is recorded
        from eval.rollout.run import check_workload
        from eval.rollout.stopper import write_order
        from eval.tasks.load import load_tasks

        write_order(run.path, [t.instance_id for t in load_tasks(check_workload(loaded), loaded.spec.base_dir)])
    models = {c.model_name: model for c in loaded.cohorts}
    workloads = ["canary", "swebench"] if rollouts else ["canary"]
    console = Console(stderr=True)
    return serve_stage(loaded, run, models, console, pick(loaded), False, together, workloads)


def repeat_probes(
    args: argparse.Namespace, loaded: LoadedSpec, run: RunDir, stacks: dict[str, Any], model: Path
) -> None:
    """Probe the running stacks again, each time into its own run (false-alarm counts over repeated runs)."""
    from rich.console import Console

    from eval.canary.run import canary_stage
    from eval.pipeline import write_cohorts

    for r in range(2, args.repeats + 1):
        again = open_run(loaded, args.results, f"{run.path.name}-r{r}")
        write_cohorts(loaded, again, str(model))
        with canary_stage(loaded, again, model, Console(stderr=True), only=list(stacks)) as stage:
            with ThreadPoolExecutor(max(len(stacks), 1)) as pool:
                done = [pool.submit(stage.serve, loaded.cohort(n), st) for n, st in stacks.items()]
            for f in done:
                f.result()
            summaries = stage.summarize()
        for n, s in summaries.items():
            log(f"repeat {r}: {n}: {s.verdict}: {s.reason}")
        again.mark(ended_at=now())


def warm_restart(loaded: LoadedSpec, run_dir: Path, model: Path) -> dict[str, float]:
    """Start every stack again at once (compile caches filled) and stop it: seconds to ready per cohort."""
    from eval.executors import pick, stacks
    from eval.stages import StartTimes, serve_batch

    times = StartTimes()
    factory = times.wrap(stacks(pick(loaded), loaded, run_dir, {c.model_name: model for c in loaded.cohorts}))
    failed: dict[str, str] = {}
    serve_batch(loaded.cohorts, factory, [], lambda c, reason: failed.update({c.name: reason}))
    if failed:
        log(f"warm restart failed: {failed}")
    return times.ready_s


def acceptance(metrics_path: Path, workload: str = "canary") -> AcceptanceSummary:
    """Speculative acceptance over one workload's snapshots (store.acceptance: restart-safe counter growth)."""
    from store.acceptance import acceptance as growth
    from store.atomic import read_jsonl

    found = growth([s for s in read_jsonl(metrics_path) if s.get("workload", workload) == workload])
    if found is None:
        return AcceptanceSummary()
    return AcceptanceSummary(
        drafts=found.drafts,
        draft_tokens=found.draft_tokens,
        accepted_tokens=found.accepted_tokens,
        acceptance_rate=round(found.rate, 4) if found.rate is not None else None,
        mean_acceptance_length=(
            round(found.mean_acceptance_length, 3) if found.mean_acceptance_length is not None else None
        ),
        per_position_rate=[round(r, 4) for r in found.per_position_rate] if found.per_position else None,
    )


def is_pd(stack: Any) -> bool:
    return any(p.role in ("prefill", "decode") for p in getattr(stack, "procs", []))


def pd_before(loaded: LoadedSpec, run: RunDir, stacks: dict[str, Any]) -> None:
    """P/D stacks: which GPU runs which worker (`<run>/placement.json`), and one request through each router."""
    if not any(is_pd(s) for s in stacks.values()):
        return
    from pd_checks import gpu_placement, handshakes, side_channels, smoke_request

    placement = gpu_placement(stacks)
    write_record(run.path / "placement.json", placement)
    workers = [(a.cohort, a.worker) for a in placement.processes]
    log(f"GPUs used: {placement.gpus_used}; processes: {workers}")
    pairs = sorted({a.cohort for a in placement.processes if a.cohort and is_pd(stacks[a.cohort])})
    if len(pairs) > 1 and placement.gpus_used == 1:  # docs/scale/gpu.md, "bfloat16 over P/D: not reproducible"
        log(
            f"warning: {len(pairs)} P/D pairs share one GPU; at bfloat16 such runs broke random cohorts: keep a result "
            "only if a second fresh node reproduces it, or run each pair alone"
        )
    strangers = [a.model_dump() for a in placement.processes if a.cohort is None]
    if strangers:  # a leftover of an earlier call on a warm node shares the GPU: its results would not be ours
        raise SystemExit(f"GPU processes that belong to no stack of this run: {strangers}")
    # Each pair's NIXL handshake isolated: its own side channel, held by its own prefill/decode worker.
    channels = side_channels(stacks)
    write_record(run.path / "side-channels.json", channels)
    log(f"NIXL side channels: {'isolated' if channels.ok else channels.problems}")
    if not channels.ok:
        raise SystemExit(f"NIXL side channels not isolated: {channels.problems}")
    failed = 0
    served = loaded.spec.model.served_name
    with ThreadPoolExecutor(len(stacks)) as pool:
        replies = pool.map(lambda st: smoke_request(st.base_url, served), stacks.values())
        smokes = dict(zip(stacks, replies, strict=True))
    for name, smoke in smokes.items():
        atomic_write_json(run.cohort_dir(name) / "smoke.json", smoke.record())
        log(f"{name}: one P/D request: {smoke.record()}")
        failed += smoke.error is not None
    if failed == len(stacks):  # no stack serves through its router: the canary would only time out
        raise SystemExit("no P/D stack answered one request; see <run>/<cohort>/logs")
    shakes = handshakes({n: st for n, st in stacks.items() if is_pd(st)})
    write_record(run.path / "handshakes.json", shakes)
    log(f"NIXL handshakes: {'every decode worker passed' if shakes.ok else shakes.problems}")
    if not shakes.ok:
        raise SystemExit(f"NIXL handshakes not as expected: {shakes.problems}")


def pd_after(run: RunDir, stacks: dict[str, Any]) -> None:
    """P/D stacks: each worker's cache/transfer/speculation counters, and what the decode side computed."""
    from pd_checks import tail_summary, worker_metrics

    for name, stack in stacks.items():
        if is_pd(stack):
            worker_metrics(stack, run.cohort_dir(name) / "worker-metrics.txt")
            log(f"{name}: decode-side prompt tokens computed (prompt - cached): {tail_summary(run.cohort_dir(name))}")


def prepare(args: argparse.Namespace, loaded: LoadedSpec, run: RunDir) -> tuple[Path, dict[str, Any], NodeTimings]:
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
    bundle = read_record(args.bundle / BUNDLE_MANIFEST, BundleManifest) if args.bundle is not None else None
    if bundle is not None:
        atomic_write_json(run.path / "bundle.json", bundle.record())
    nixl = read_record(args.nixl / "manifest.json", NixlManifest) if args.nixl is not None else None
    if nixl is not None:
        write_record(run.path / "nixl.json", nixl)
    timings = NodeTimings(model_generation_s=gen_s, builds_s=build_s, gpus=gpu_inventory())
    return model, builds, timings


def qualify(args: argparse.Namespace, loaded: LoadedSpec, run: RunDir, t_start: float) -> NodeTimings:
    from eval.canary.run import canary_config, total

    model, _, timings = prepare(args, loaded, run)
    if args.dry_run:
        return timings
    log(f"starting {len(loaded.cohorts)} stacks at once")

    @contextmanager
    def together(stacks: dict[str, Any]) -> Iterator[None]:
        log(f"{len(stacks)} stacks ready: {', '.join(stacks)}")
        pd_before(loaded, run, stacks)
        yield
        pd_after(run, stacks)
        repeat_probes(args, loaded, run, stacks, model)

    served, serve_s = timed(serve, loaded, run, model, args.rollouts, together)
    timings.cold_start_s = served.ready_s
    log(f"ready after (s): {served.ready_s}")
    failed = sorted({c.name for c in loaded.cohorts} - set(served.ready_s))
    if failed:  # recorded as the canary's infra errors of those cohorts (and their rollouts' failure)
        timings.start_failed = failed
        log(f"stacks that did not start: {failed}")
    walls = served.probe_walls  # seconds from each stack's start to its last probe
    probes = total(canary_config(loaded)) * len(walls)
    timings.probe_wall_s, timings.serve_s, timings.probes = walls, serve_s, probes
    probe_s = max(walls.values(), default=0.0)
    timings.probing_s = probe_s
    timings.probes_per_min = round(probes / probe_s * 60, 1) if probe_s else None
    timings.acceptance = {n: acceptance(run.cohort_dir(n) / "metrics.jsonl") for n in walls}
    if args.rollouts:
        swebench = [c.name for c in loaded.cohorts if c.runs("swebench")]
        timings.rollout_acceptance = {n: acceptance(run.cohort_dir(n) / "metrics.jsonl", "swebench") for n in swebench}
    timings.verdicts = {n: {"verdict": s.verdict, "reason": s.reason} for n, s in served.canary.items()}
    for n, s in served.canary.items():
        log(f"{n}: {s.verdict}: {s.reason}")
    if args.no_warm or time.monotonic() - t_start > args.budget_s:
        log("warm restart skipped")
        return timings
    timings.warm_start_s = warm_restart(loaded, args.results / f"{run.path.name}-warm", model)
    log(f"warm restart ready: {timings.warm_start_s}")
    return timings


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    t_start = time.monotonic()
    loaded = load(args)
    run = open_run(loaded, args.results, args.run_id)
    log(f"run {run.path}: cohorts {', '.join(c.name for c in loaded.cohorts)}")
    timings = qualify(args, loaded, run, t_start)
    timings.total_s = round(time.monotonic() - t_start, 1)
    write_record(run.path / "timings.json", timings)
    run.mark(ended_at=now())
    log(f"done in {timings.total_s} s: {run.path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
