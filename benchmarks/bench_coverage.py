"""Branch coverage of vLLM's speculative code inside the CPU server processes, EngineCore included (issue 27).

coverage.py runs inside every vLLM process of the probed cohorts: a `sitecustomize.py` on the servers'
PYTHONPATH (a private directory holding coverage, so the cached vLLM environments stay untouched) starts it when
`COVERAGE_PROCESS_START` is set, with `parallel`, `branch`, `concurrency = multiprocessing,thread` and `include`
patterns for the vllm paths (naming a vllm package in `source_pkgs` imports torch during site init and
segfaults). The API server kills EngineCore and its worker at shutdown, so each process also saves from a daemon
thread every 2 s (re-armed after fork), and the servers get `--shutdown-timeout`.

It runs `specqual probe` on the chosen cohorts with these settings (whatever canary the cohort file asks for:
`--modes fuzz` for the generated fuzzer, the hand-written modes otherwise), combines the data files and prints
lines / branches per group, and the branches never taken per group into `--gaps` (for the fuzzer's authors).

    /work/coord/vslot .venv/bin/python benchmarks/bench_coverage.py --cohort stock-off --cohort stock-self4 \\
        --measure stock-self4 --modes fuzz --run-id cov-fuzz-self4
    .venv/bin/python benchmarks/bench_coverage.py --report cov-fuzz-self4     # re-read a finished run
    # K=4 and MTP 5 combined: a second file's run into the same coverage directory
    /work/coord/vslot .venv/bin/python benchmarks/bench_coverage.py --file cohorts/bugzoo-mamba-cpu.yaml \
        --cohort fixed-off --cohort fixed-mtp5 --measure fixed-mtp5 --modes fuzz --run-id cov-mtp5 \
        --coverage-id cov-fuzz-self4

Baseline (issue 27, the hand-written canary, self-draft K=4 + MTP 5 combined, lines / branches):
spec_decode 36/19, rejection_sampler 53/33, sample/ops 6/2, logits_processor 58/38, structured_output 21/2,
scheduler 51/35.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
COVERAGE = "coverage==7.18.0"
GROUPS = {
    "v1/spec_decode/": "vllm/v1/spec_decode/",
    "v1/sample/rejection_sampler.py": "vllm/v1/sample/rejection_sampler.py",
    "v1/sample/ops/": "vllm/v1/sample/ops/",
    "v1/sample/logits_processor/": "vllm/v1/sample/logits_processor/",
    "v1/structured_output/": "vllm/v1/structured_output/",
    "v1/core/sched/scheduler.py": "vllm/v1/core/sched/scheduler.py",
}
# Set in every measured server beside COVERAGE_PROCESS_START (quoted in the override: the env model wants strings).
# coverage.py traces Python bytecode only: a numba function runs compiled and is never seen (the ngram proposer's
# matcher, `_find_longest_matched_ngram_and_propose_tokens`, and its batch loop counted as never taken though every
# ngram step ran them). Interpreted, the same function with the same inputs takes the same branches; only measured
# servers run it so (slower, same output).
MEASURE_ENV = {"NUMBA_DISABLE_JIT": "1"}
SITECUSTOMIZE = '''\
"""specqual bench_coverage: coverage.py in every vLLM process (COVERAGE_PROCESS_START), saved every 2 s."""
import os

if os.environ.get("COVERAGE_PROCESS_START"):
    try:
        import threading
        import time

        import coverage

        coverage.process_startup()

        def _save_forever():
            while True:
                time.sleep(2.0)
                cov = coverage.Coverage.current()
                if cov is not None:
                    try:
                        cov.save()
                    except Exception:
                        pass

        def _arm():
            threading.Thread(target=_save_forever, name="specqual-coverage-saver", daemon=True).start()

        _arm()
        os.register_at_fork(after_in_child=_arm)
    except Exception:
        pass
'''


def cache_dir() -> Path:
    from eval.stacks.envs import cache_root

    return cache_root() / "coverage-lib" / COVERAGE.replace("==", "-")


def ensure_lib() -> Path:
    """A directory with coverage and the sitecustomize hook (built once, shared)."""
    lib = cache_dir()
    if not (lib / "sitecustomize.py").is_file():
        lib.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--target", str(lib), COVERAGE], check=True)
        (lib / "sitecustomize.py").write_text(SITECUSTOMIZE)
    return lib


def write_rc(data_dir: Path, site_packages: Path) -> Path:
    data_dir.mkdir(parents=True, exist_ok=True)
    rc = data_dir / "coveragerc"
    include = ",\n    ".join(f"*/{p}*" for p in GROUPS.values())
    rc.write_text(
        f"[run]\nparallel = True\nbranch = True\nconcurrency = multiprocessing,thread\n"
        f"data_file = {data_dir}/.coverage\ninclude =\n    {include}\n\n"
        f"[paths]\nvllm =\n    {site_packages}/vllm/\n    */vllm/\n"
    )
    return rc


def site_packages(file: str) -> Path:
    """The stock build's site-packages (the overlays mirror it; [paths] maps their files back onto it)."""
    from eval.spec.load import load_spec
    from eval.stacks import ensure_build

    spec = load_spec([file]).spec
    build = ensure_build(spec, next(iter(spec.builds)))
    assert build.python is not None
    out = subprocess.run(
        [str(build.python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    )
    return Path(out.stdout.strip())


def load_matrix(file: str) -> list[dict[str, Any]]:
    import yaml

    return list(yaml.safe_load((ROOT / file).read_text())["matrix"]["cohorts"])


def cohort_names(file: str, overrides: list[str]) -> list[str]:
    """The matrix's cohort names after the -c overrides (an override may put another cohort at an index)."""
    from eval.spec.load import load_spec

    return [c.name for c in load_spec([file, *overrides]).spec.matrix.cohorts]


def union(out_dir: Path, parts: list[str], lib: Path, site: Path) -> Path:
    """One coverage directory holding the data of several runs (e.g. self-draft K=4 + MTP 5): each part is a
    coverage id whose data is first combined in its own directory (its `.coverage`, which outlives the
    per-process files), then copied here as `.coverage.part-<id>` and combined into `out_dir/.coverage`."""
    import shutil

    out_dir.mkdir(parents=True, exist_ok=True)
    rc = write_rc(out_dir, site)
    for old in out_dir.glob(".coverage*"):
        old.unlink()
    for part in parts:
        d = ROOT / "results" / part / "coverage"
        combine_and_summarize(d, d / "coveragerc", lib)
        if not (d / ".coverage").is_file():
            raise SystemExit(f"{d}: no coverage data")
        shutil.copyfile(d / ".coverage", out_dir / f".coverage.part-{part}")
    env = {"PYTHONPATH": str(lib), "PATH": "/usr/bin:/bin"}
    subprocess.run([sys.executable, "-m", "coverage", "combine", f"--rcfile={rc}", "--keep"], cwd=out_dir, env=env,
                   check=True)  # fmt: skip
    return rc


def probe(args: argparse.Namespace, lib: Path, rc: Path) -> None:
    cmd = [sys.executable, "-m", "eval.cli", "probe", args.file, "--run-id", args.run_id]
    for c in args.cohort:
        cmd += ["--cohort", c]
    # The launcher puts the build's overlay first on PYTHONPATH and keeps the caller's after it: the hook
    # directory rides on this process's PYTHONPATH (inert here: COVERAGE_PROCESS_START is only in server.env).
    # Only the speculative cohorts under measurement run coverage (the reference server's own paths would
    # count otherwise): the variable goes into those matrix entries' env.
    # The caller's overrides go first: one may put another cohort at a matrix index (an ngram server), and the
    # coverage variable must land in that entry, not in the one it replaced.
    for c in args.config or []:
        cmd += ["-c", c]
    names = cohort_names(args.file, args.config or [])
    for c in args.measure or args.cohort:
        cmd += ["-c", f"matrix.cohorts.{names.index(c)}.env.COVERAGE_PROCESS_START={rc}"]
        cmd += [x for k, v in MEASURE_ENV.items() for x in ("-c", f"matrix.cohorts.{names.index(c)}.env.{k}='{v}'")]
    cmd += ["-c", "server.args.shutdown_timeout=10"]
    if args.modes:
        cmd += ["-c", f"workloads.canary.modes=[{args.modes}]"]
    print("$", " ".join(cmd), flush=True)
    rest = os.environ.get("PYTHONPATH", "")
    env = {**os.environ, "PYTHONPATH": f"{lib}:{rest}" if rest else str(lib)}
    subprocess.run(cmd, cwd=ROOT, check=False, env=env)


def combine_and_summarize(data_dir: Path, rc: Path, lib: Path, fresh: bool = False) -> dict[str, Any]:
    """`fresh`: the combined file is already written (a --union); otherwise this directory's per-process files
    are combined into it (appending to what it held)."""
    env = {"PYTHONPATH": str(lib), "PATH": "/usr/bin:/bin"}
    py = [sys.executable, "-m", "coverage"]
    if not fresh:
        # Patched overlay files onto the stock lines first (benchmarks/coverage_remap.py), then combine.
        site = _site_of_rc(rc)
        if site is not None:
            remap_env = {**env, "PYTHONPATH": f"{lib}:{ROOT}"}
            remap = [sys.executable, "-m", "benchmarks.coverage_remap", str(data_dir), str(site)]
            subprocess.run(remap, cwd=ROOT, env=remap_env, check=True)
        subprocess.run([*py, "combine", f"--rcfile={rc}", "--keep", "--append"], cwd=data_dir, env=env, check=False)
    out = data_dir / "coverage.json"
    subprocess.run([*py, "json", f"--rcfile={rc}", "-o", str(out), "-q"], cwd=data_dir, env=env, check=False)
    files = json.loads(out.read_text())["files"]
    groups: dict[str, Any] = {}
    for name, pattern in GROUPS.items():
        mine = {f: d for f, d in files.items() if pattern in f}
        s = [d["summary"] for d in mine.values()]
        lines, lines_hit = sum(x["num_statements"] for x in s), sum(x["covered_lines"] for x in s)
        br, br_hit = sum(x["num_branches"] for x in s), sum(x["covered_branches"] for x in s)
        missing = [f"{f.split('vllm/', 1)[-1]}:{a}->{b}" for f, d in mine.items() for a, b in d["missing_branches"]]
        groups[name] = {
            "files": len(mine),
            "lines": [lines_hit, lines],
            "branches": [br_hit, br],
            "missing_branches": missing,
        }
    return groups


def _site_of_rc(rc: Path) -> Path | None:
    """The stock site-packages `write_rc` put first under `[paths] vllm =` (None in an rc without it)."""
    lines = rc.read_text().splitlines()
    for i, line in enumerate(lines[:-1]):
        if line.strip() == "vllm =":
            return Path(lines[i + 1].strip().removesuffix("/").removesuffix("/vllm"))
    return None


def show(groups: dict[str, Any]) -> None:
    print(f"{'group':<34} {'files':>5} {'lines':>14} {'branches':>14}")
    for name, g in groups.items():
        (lh, lt), (bh, bt) = g["lines"], g["branches"]
        lp = f"{100 * lh / lt:.0f}%" if lt else "-"
        bp = f"{100 * bh / bt:.0f}%" if bt else "-"
        print(f"{name:<34} {g['files']:>5} {lh:>5}/{lt:<5}{lp:>4} {bh:>5}/{bt:<5}{bp:>4}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--file", default="cohorts/bugzoo-cpu.yaml")
    ap.add_argument("--cohort", action="append", default=[])
    ap.add_argument("--measure", action="append", help="cohorts whose servers run coverage (default: --cohort)")
    ap.add_argument("--modes", help="override workloads.canary.modes, e.g. fuzz")
    ap.add_argument("-c", "--config", action="append", help="more overrides for specqual probe")
    ap.add_argument("--run-id", required=True)
    ap.add_argument(
        "--coverage-id",
        help="keep the coverage data under results/<this>/coverage (default: the run id): two runs of different "
        "cohort files given the same coverage id are combined (self-draft K=4 + MTP 5, like the issue's baseline)",
    )
    ap.add_argument("--report", action="store_true", help="only combine and report a finished run")
    ap.add_argument("--gaps", type=Path, help="write the never-taken branches per group here (markdown)")
    ap.add_argument(
        "--union",
        help="with --report: combine these coverage ids (comma-separated) into results/<--run-id>/coverage and "
        "report the union (e.g. a K=4 run and an MTP 5 run, the issue's baseline)",
    )
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    lib = ensure_lib()
    data_dir = ROOT / "results" / (args.coverage_id or args.run_id) / "coverage"
    rc = data_dir / "coveragerc"
    if args.union:
        rc = union(data_dir, args.union.split(","), lib, site_packages(args.file))
        groups = combine_and_summarize(data_dir, rc, lib, fresh=True)
    elif not args.report:
        rc = write_rc(data_dir, site_packages(args.file))
        probe(args, lib, rc)
    if not args.union:
        groups = combine_and_summarize(data_dir, rc, lib)
    (data_dir / "groups.json").write_text(json.dumps(groups, indent=1))
    show(groups)
    if args.gaps:
        lines = [f"# Branches never taken in run {args.run_id} (benchmarks/bench_coverage.py)\n"]
        for name, g in groups.items():
            lines.append(f"\n## {name}: {g['branches'][0]}/{g['branches'][1]} branches\n")
            lines += [f"- {m}\n" for m in g["missing_branches"]]
        args.gaps.write_text("".join(lines))


if __name__ == "__main__":
    main()
