"""Simulation benchmark of the anytime-valid sequential non-inferiority test (analysis.sequential) on the
motivating scenarios (benchmarks/bench_verdicts.py sweeps the whole grid).

For each scenario it simulates many paired runs (seeded): per-instance difficulty from a Beta distribution with
the given ICC between repeats, 3 repeats per instance and cohort, instances arriving in random order, the test
asked after every instance up to 500. It prints how often the test ends FAIL / PASS / INCONCLUSIVE and how many
instances it needed (median, p90, mean).

    .venv/bin/python benchmarks/bench_sequential.py              # 4000 replications per scenario
    .venv/bin/python benchmarks/bench_sequential.py --reps 20000 --rho 0.2
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from analysis.sequential import FAIL, INCONCLUSIVE, PASS, Design, run_paths, simulate_pairs

# (name, control accuracy, cohort accuracy): the motivating numbers of vLLM PR 55178.
SCENARIOS = [
    ("motivating effect: 38.67% -> 3.80%", 0.3867, 0.0380),
    ("Model Runner V2: 38.93% -> 15.60%", 0.3893, 0.1560),
    ("no effect: 38.20% -> 38.40%", 0.3820, 0.3840),
    ("drop = margin: 38.40% -> 35.40%", 0.3840, 0.3540),
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=4000)
    ap.add_argument("--instances", type=int, default=500)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--rho", type=float, default=0.5, help="ICC between repeats of an instance")
    ap.add_argument("--margin", type=float, default=0.03)
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    design = Design(margin=args.margin, alpha=args.alpha)
    print(f"design: margin {args.margin}, alpha {args.alpha} per one-sided bet, asked after every instance")
    print(f"{args.reps} replications per scenario, ICC {args.rho}, {args.repeats} repeats, seed {args.seed}\n")
    print(f"{'scenario':<38} {'FAIL':>7} {'PASS':>7} {'INCONC':>7} {'median n':>9} {'p90 n':>7} {'mean n':>7}")
    rng = np.random.default_rng(args.seed)
    for name, control, cohort in SCENARIOS:
        start = time.perf_counter()
        d = simulate_pairs(rng, args.reps, args.instances, control, cohort, args.repeats, args.rho)
        decision, used = run_paths(d, design)
        rates = [np.mean(decision == code) for code in (FAIL, PASS, INCONCLUSIVE)]
        median, p90 = np.percentile(used, [50, 90])
        print(
            f"{name:<38} {rates[0]:>7.2%} {rates[1]:>7.2%} {rates[2]:>7.2%} {median:>9.0f} {p90:>7.0f} "
            f"{used.mean():>7.1f}   ({time.perf_counter() - start:.1f} s)"
        )
    print("\nfalse-FAIL rate = FAIL share under 'no effect'; the 'drop = margin' row is the least favourable null of")
    print("the FAIL test and of the PASS test (each share is a type-I error the design bounds by alpha).")


if __name__ == "__main__":
    main()
