"""Operating characteristics of the verdict's accuracy and corruption tests over a grid (analysis.operating).

Accuracy: control rate x ICC x repeats x true drop (0, the margin, the seed's relative effect 38.67% -> 3.80%),
paired Beta-Binomial runs of up to 500 instances; the verdict of a run of n instances is what the anytime-valid
test decided by n, so one sequence of 500 gives every size of the grid. Reports the worst false PASS (drop =
margin) and false FAIL (drop = 0 or = margin) over the grid at every size, power, and instances to a verdict.
Corruption: control share x ICC x repeats x true excess (0, the ceiling, 5 pts, the seed's 59 pts), paired and
without a control. Prints Markdown (the tables of docs/trust/analysis.md).

    nice -n 10 .venv/bin/python benchmarks/bench_verdicts.py                 # 4000 runs per cell, ~3 min
    nice -n 10 .venv/bin/python benchmarks/bench_verdicts.py --paths 1000   # quick look
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from analysis import operating
from analysis.operating import Cell

SIZES = [5, 10, 20, 50, 100, 200, 500]
RATES = [0.02, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 0.9, 0.95, 0.98]
ICCS = [0.0, 0.2, 0.4, 0.6]
REPEATS = [1, 3]
BASES = [0.0, 0.01, 0.05, 0.2]


def pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def accuracy_grid(args: argparse.Namespace, rng: np.random.Generator) -> dict[tuple, Cell]:
    cells = {}
    for r in REPEATS:
        for rate in RATES:
            for icc in ICCS:
                for name, drop in (("none", 0.0), ("margin", args.margin), ("seed", operating.seed_drop(rate))):
                    if name == "margin" and rate < args.margin:
                        continue  # the cohort cannot lose the margin: no false PASS to measure
                    cells[(r, rate, icc, name)] = operating.accuracy_cell(
                        rng, args.paths, SIZES, rate, drop, r, icc, args.margin, args.alpha
                    )
    return cells


def worst_table(cells: dict[tuple, Cell], args: argparse.Namespace) -> list[str]:
    head = "| repeats | error | " + " | ".join(f"n={n}" for n in SIZES) + " | worst cell at n=500 |"
    out = [head, "|" + "---|" * (len(SIZES) + 3)]
    for r in REPEATS:
        for label, keys, attr in (
            ("false PASS (drop = margin)", ["margin"], "pass_"),
            ("false FAIL (drop = 0)", ["none"], "fail"),
            ("FAIL at drop = margin", ["margin"], "fail"),
        ):
            mine = {k: getattr(c, attr) for k, c in cells.items() if k[0] == r and k[3] in keys}
            worst = np.max(np.stack(list(mine.values())), axis=0)
            at = max(mine, key=lambda k: mine[k][-1])
            where = f"rate {pct(at[1])}, ICC {at[2]}"
            out.append(f"| {r} | {label} | " + " | ".join(pct(x) for x in worst) + f" | {where} |")
    return out


def power_table(cells: dict[tuple, Cell], r: int, icc: float) -> list[str]:
    out = [
        "| control rate | no effect: PASS by 100 / 500 | median n to a verdict "
        "| seed effect (drop, pts): FAIL by 20 / 100 | median n to FAIL |",
        "|---:|---:|---:|---:|---:|",
    ]
    for rate in RATES:
        none, seed = cells[(r, rate, icc, "none")], cells[(r, rate, icc, "seed")]
        i100, i500, i20 = SIZES.index(100), SIZES.index(500), SIZES.index(20)
        out.append(
            f"| {pct(rate)} | {pct(none.pass_[i100])} / {pct(none.pass_[i500])} | {none.median_to_verdict:.0f} | "
            f"({100 * operating.seed_drop(rate):.1f}) {pct(seed.fail[i20])} / {pct(seed.fail[i100])} | "
            f"{seed.median_to_verdict:.0f} |"
        )
    return out


def corruption_tables(args: argparse.Namespace, rng: np.random.Generator) -> list[str]:
    excesses = [("0", 0.0), ("= ceiling", args.ceiling), ("5 pts", 0.05), ("seed 59 pts", 0.5927)]
    head = "| design | true excess | " + " | ".join(f"n={n}" for n in SIZES) + " | median n to FAIL (worst cell) |"
    out = [head, "|" + "---|" * (len(SIZES) + 3)]
    for paired in (True, False):
        for label, excess in excesses:
            if not paired and excess == 0.0:
                continue
            a = (args.ceiling, args.alpha, paired)
            cells = [
                operating.corruption_cell(rng, args.paths, SIZES, base, excess, r, icc, *a)
                for base in (BASES if paired else [0.0])
                for icc in ICCS
                for r in REPEATS
            ]
            fails = np.stack([c.fail for c in cells])
            agg = fails.max(axis=0) if excess <= args.ceiling else fails.min(axis=0)
            kind = "worst" if excess <= args.ceiling else "lowest"
            med = f"{np.nanmax([c.median_to_verdict for c in cells]):.0f}" if excess > args.ceiling else "—"
            design = "paired with control" if paired else "no control (share)"
            name = f"{label} ({kind} P(FAIL))"
            out.append(f"| {design} | {name} | " + " | ".join(pct(x) for x in agg) + f" | {med} |")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--paths", type=int, default=4000, help="simulated runs per grid cell")
    ap.add_argument("--margin", type=float, default=0.03)
    ap.add_argument("--ceiling", type=float, default=0.02)
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    start = time.perf_counter()
    cells = accuracy_grid(args, rng)
    bound = operating.mc_bound(args.alpha, args.paths)
    print(f"## Accuracy: worst error over control rates {RATES[0]:.0%}..{RATES[-1]:.0%} and ICC {ICCS}")
    print(f"\n{args.paths} runs per cell, alpha {args.alpha}, margin {args.margin}; alpha + 3 MC SE = {pct(bound)}\n")
    print("\n".join(worst_table(cells, args)))
    for r, icc in ((3, 0.4), (1, 0.0)):
        print(f"\n### Power and instances to a verdict: {r} repeat(s), ICC {icc}\n")
        print("\n".join(power_table(cells, r, icc)))
    grid = f"base shares {BASES}, ICC {ICCS}, repeats 1 and 3"
    print(f"\n## Corruption: P(FAIL) by size, ceiling {args.ceiling}, over {grid}\n")
    print("\n".join(corruption_tables(args, rng)))
    print(f"\n({time.perf_counter() - start:.0f} s, seed {args.seed})")


if __name__ == "__main__":
    main()
