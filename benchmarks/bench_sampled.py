"""Operating characteristic of the sampled mode's test (eval/canary/sampled/stats.py), by simulation.

Tokens come from reference distributions whose most likely token has probability p_top ~ U(lo, hi); a fault moves
`shift` of probability to that token (the rest scaled down) on a fraction `dilution` of the tokens (draft rows;
bonus rows are untouched). Under that model the randomized PIT is exact without a vocabulary: the top token's
interval is [0, p_top), the others share [p_top, 1) in proportion. The test is read after every batch, as
`specqual sampled` does, until it decides or `--max-tokens`.

    .venv/bin/python benchmarks/bench_sampled.py --runs 400 --out docs/trust/sampled-oc.json \
        --plot docs/trust/sampled-oc.png

Prints, per shift: FAIL / PASS / undecided rates and the tokens needed (median, p90); the JSON has the
cumulative FAIL rate at each token count (the curves of the plot).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from eval.canary.sampled.stats import Decision, SequentialTest


def pits(rng: np.random.Generator, n: int, shift: float, dilution: float, lo: float, hi: float) -> np.ndarray:
    p_top = rng.uniform(lo, hi, n)
    q_top = np.where(rng.random(n) < dilution, np.minimum(p_top + shift, 1.0), p_top)
    v = rng.random(n)
    return np.where(rng.random(n) < q_top, v * p_top, p_top + v * (1.0 - p_top))


def one_run(rng: np.random.Generator, args: argparse.Namespace, shift: float) -> tuple[str, int]:
    test = SequentialTest(alpha=args.alpha, tolerance=args.tolerance)
    while test.n < args.max_tokens:
        test.add(pits(rng, args.batch, shift, args.dilution, args.p_lo, args.p_hi))
        decision = test.decision()
        if decision is not Decision.UNDECIDED:
            return decision.value, test.n
    return "UNDECIDED", test.n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=400)
    ap.add_argument("--shifts", type=float, nargs="+", default=[0.0, 0.01, 0.02, 0.03, 0.05])
    ap.add_argument("--max-tokens", type=int, default=30000)
    ap.add_argument("--batch", type=int, default=200, help="tokens between looks (16 draws x ~12 tokens)")
    ap.add_argument("--dilution", type=float, default=0.8, help="share of tokens a fault reaches (draft rows)")
    ap.add_argument("--p-lo", type=float, default=0.2)
    ap.add_argument("--p-hi", type=float, default=0.9)
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--tolerance", type=float, default=0.02)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--plot", type=Path)
    ap.add_argument(
        "--real",
        type=Path,
        nargs="*",
        default=[],
        help="cohort dirs of `specqual sampled` runs (RUN/COHORT): their FAIL-by-tokens curve is drawn over the "
        "simulated ones (one step per run, from each seed's sampled.json)",
    )
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    grid = np.arange(args.batch, args.max_tokens + 1, args.batch)
    rows = []
    for shift in args.shifts:
        runs = [one_run(rng, args, shift) for _ in range(args.runs)]
        fail_at = np.array([n for d, n in runs if d == "FAIL"])
        rates = {d: sum(r[0] == d for r in runs) / args.runs for d in ("FAIL", "PASS", "UNDECIDED")}
        curve = [float((fail_at <= n).sum() / args.runs) for n in grid]
        need = [n for d, n in runs if d != "UNDECIDED"]
        rows.append(
            {
                "shift": shift,
                **rates,
                "curve": curve,
                "decided_tokens_median": _q(need, 50),
                "decided_tokens_p90": _q(need, 90),
                "fail_tokens_p90": _q(list(fail_at), 90),
            }
        )
        print(
            f"shift {shift:.3f}: FAIL {rates['FAIL']:.3f}  PASS {rates['PASS']:.3f}  undecided "
            f"{rates['UNDECIDED']:.3f}  tokens to decide: median {rows[-1]['decided_tokens_median']}  "
            f"p90 {rows[-1]['decided_tokens_p90']}  (FAIL p90 {rows[-1]['fail_tokens_p90']})"
        )
    result = {
        "schema_version": 1,
        "args": {k: _plain(v) for k, v in vars(args).items()},
        "tokens": grid.tolist(),
        "rows": rows,
        "real": [real_runs(d) for d in args.real],
    }
    if args.out:
        args.out.write_text(json.dumps(result, indent=1) + "\n")
    if args.plot:
        plot(result, args.plot)


def real_runs(cohort_dir: Path) -> dict:
    """One real cohort's runs: per seed, the verdict and the tokens tested when it was reached."""
    runs = []
    for f in sorted(Path(cohort_dir).glob("sampled/seed*/sampled.json")):
        s = json.loads(f.read_text())
        runs.append({"seed": s["seed"], "verdict": s["verdict"], "tokens": s["test"]["tokens"], "wall_s": s["wall_s"]})
    return {"cohort_dir": str(cohort_dir), "runs": runs}


def _plain(v: object) -> object:
    if isinstance(v, list):
        return [_plain(x) for x in v]
    return str(v) if isinstance(v, Path) else v


def _q(xs: list[int], q: float) -> int | None:
    return int(np.percentile(xs, q)) if xs else None


def plot(result: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.2))
    for row in result["rows"]:
        label = "no shift (false FAILs)" if row["shift"] == 0 else f"shift {row['shift'] * 100:.0f} points"
        ax.plot(result["tokens"], row["curve"], label=label, lw=2 if row["shift"] in (0, 0.03) else 1)
    for real in result.get("real", []):
        runs = real["runs"]
        at = sorted(r["tokens"] for r in runs if r["verdict"] == "FAIL")
        xs = [0, *at, result["tokens"][-1]]
        ys = [0.0, *[(i + 1) / len(runs) for i in range(len(at))], len(at) / len(runs)]
        name = Path(real["cohort_dir"]).name
        ax.step(xs, ys, where="post", color="black", lw=1.5, ls="-.", label=f"real: {name} ({len(runs)} runs)")
    a = result["args"]
    ax.axhline(a["alpha"], color="grey", ls="--", lw=1)
    ax.axhline(0.9, color="grey", ls=":", lw=1)
    ax.set_xlabel(f"sampled tokens tested (read every {a['batch']})")
    ax.set_ylabel("P(FAIL by then)")
    ax.set_title(
        f"Sampled mode: FAIL rate vs tokens ({a['runs']} runs per curve; p_top ~ U({a['p_lo']}, {a['p_hi']}), "
        f"{a['dilution']:.0%} of tokens shifted)",
        fontsize=9,
    )
    ax.set_ylim(0, 1.01)
    ax.legend(fontsize=8, loc="center right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    main()
