"""The acceptance-over-time plot of docs/trust/uptime.md, from a soak run's saved cohort directories.

    python benchmarks/uptime/plot.py RUN_DIR --cohort pr48132-mtp5 --cohort fixed-mtp5-r1 \\
        --out docs/trust/uptime-acceptance.png

It draws what the report draws (`analysis.uptime.plot_acceptance`: `store.acceptance.windows` over each cohort's
metrics.jsonl, the detector's null floor from its uptime.json), for the named cohorts only. `--keep DIR` copies
the plotted cohorts' uptime.json and metrics.jsonl there, so the plot can be drawn again without the run.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from analysis.uptime import plot_acceptance  # noqa: E402

KEPT = ("uptime.json", "metrics.jsonl")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run_dir", type=Path)
    ap.add_argument("--cohort", action="append", required=True, help="a cohort to draw (repeatable)")
    ap.add_argument("--out", type=Path, required=True, help="the PNG to write")
    ap.add_argument("--window-s", type=float, default=5.0, help="acceptance window width (seconds)")
    ap.add_argument("--keep", type=Path, help="copy the plotted cohorts' uptime.json and metrics.jsonl here")
    args = ap.parse_args(argv)
    name = plot_acceptance(args.run_dir, args.out.parent, args.window_s, args.out.name, cohorts=args.cohort)
    if name is None:
        print(f"{args.run_dir}: no acceptance data for {args.cohort}", file=sys.stderr)
        return 1
    if args.keep:
        for c in args.cohort:
            (args.keep / c).mkdir(parents=True, exist_ok=True)
            for f in KEPT:
                shutil.copy2(args.run_dir / c / f, args.keep / c / f)
    print(args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
