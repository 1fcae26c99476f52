"""Draw the generated canary's drafts per step and accepted tokens per draft position from a real fuzz run.

Reads a cohort's `canary.json` (`extra.fuzz.steps`: per engine step, how many requests decoded and how many
draft tokens they carried, from vLLM's `--enable-logging-iteration-details` lines; `extra.fuzz.
accepted_per_position`: vLLM's per-position acceptance counters) and writes one PNG with two panels:
- drafts per decoding request in each step. A step of n requests carrying d drafts sits at d / n; a value that is
  not a whole number is a step that mixed draft counts for certain (e.g. 2 requests with 5 drafts: 4 + 1);
  steps of one request, steps of several requests with as many drafts each, and mixed steps are drawn apart;
- accepted tokens per draft position (the rate at each position, with the counts).

    .venv/bin/python benchmarks/plot_fuzz_steps.py results/<run>/stock-self4/canary.json \\
        --out docs/trust/fuzz-drafts-per-step.png
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

KEY = re.compile(r"(\d+) req, (\d+) drafts")


def step_counts(steps: dict[str, Any]) -> tuple[Counter[float], Counter[float], Counter[float]]:
    """Steps per drafts-per-request value: (one request, several with equal counts possible, certainly mixed)."""
    single: Counter[float] = Counter()
    even: Counter[float] = Counter()
    mixed: Counter[float] = Counter()
    for key, count in (steps.get("histogram") or {}).items():
        m = KEY.fullmatch(key)
        if m is None:
            continue
        reqs, drafts = int(m.group(1)), int(m.group(2))
        per = round(drafts / reqs, 2)
        (single if reqs == 1 else mixed if drafts % reqs else even)[per] += int(count)
    return single, even, mixed


def fuzz_block(path: Path, cohort: str | None = None) -> dict[str, Any]:
    """The `extra.fuzz` block of a canary.json, or the same counts from a bench_fuzz.py `--out` file (its coverage
    row of `cohort`)."""
    if path.suffix == ".jsonl":
        rows = [json.loads(ln) for ln in path.read_text().splitlines() if ln.strip()]
        row = next(r for r in rows if r.get("coverage") and r.get("cohort") == cohort)
        return {"steps": row["steps"], "accepted_per_position": row["acceptance"]}
    doc = json.loads(path.read_text())
    block = (doc.get("extra") or {}).get("fuzz") or doc.get("fuzz") or {}
    if not block.get("steps"):
        raise SystemExit(f"{path}: no extra.fuzz.steps (run the servers with enable_logging_iteration_details)")
    return block


def draw(block: dict[str, Any], k: int, title: str, out: Path) -> dict[str, Any]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = block["steps"]
    single, even, mixed = step_counts(steps)
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(11, 4.2), gridspec_kw={"width_ratios": [2.2, 1]})
    xs = sorted(set(single) | set(even) | set(mixed))
    width = 0.27
    top = 1
    for j, (counts, label, color) in enumerate(
        (
            (single, "1 request", "#9aa5b1"),
            (even, "several requests, equal counts possible", "#3b6ea8"),
            (mixed, "several requests, draft counts mixed", "#d1495b"),
        )
    ):
        ys = [counts.get(x, 0) for x in xs]
        top = max([top, *ys])
        at = [i + (j - 1) * width for i in range(len(xs))]
        ax.bar(at, ys, width, label=f"{label} ({sum(ys):,} steps)", color=color)
    ax.set_yscale("symlog", linthresh=10)
    ax.set_ylim(0, top * 4)
    ax.set_xticks(range(len(xs)), [f"{x:g}" for x in xs], rotation=60, fontsize=8)
    ax.set_xlabel(f"draft tokens per decoding request in the step (K = {k})")
    ax.set_ylabel("engine steps")
    ax.set_title(
        f"{steps['decode_steps']:,} decode steps: {steps['steps_below_k']:,} below K, "
        f"{steps['steps_mixing_draft_counts']:,} mixing draft counts",
        fontsize=10,
    )
    ax.legend(fontsize=8, loc="upper left")
    if xs:
        ax.set_xlim(-0.6, len(xs) - 0.4)
    acc = block.get("accepted_per_position") or {}
    rates = acc.get("per_position_rate") or []
    counts_pos = acc.get("per_position") or []
    bx.bar(range(1, len(rates) + 1), rates, color="#3b6ea8")
    for i, (r, c) in enumerate(zip(rates, counts_pos, strict=False), start=1):
        bx.text(i, r + 0.01, f"{c:,}", ha="center", fontsize=8)
    bx.set_ylim(0, 1)
    bx.set_xlabel("draft position")
    bx.set_ylabel("accepted / drafts")
    rate = acc.get("rate")
    head = f"accepted tokens per position (rate {rate:.2f})" if rate is not None else "accepted tokens"
    bx.set_title(head, fontsize=10)
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    return {"steps": steps["decode_steps"], "mixed": steps["steps_mixing_draft_counts"],
            "below_k": steps["steps_below_k"], "mixed_values": sorted(mixed), "acceptance": rate}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("canary_json", type=Path, help="a cohort's canary.json from a fuzz run (or bench_fuzz's .jsonl)")
    ap.add_argument("--cohort", help="with a .jsonl: the cohort whose coverage row to draw")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("-k", type=int, default=4, help="the cohort's num_speculative_tokens")
    ap.add_argument("--title", default="Generated canary (modes: [fuzz]) on a self-drafting server")
    args = ap.parse_args()
    print(json.dumps(draw(fuzz_block(args.canary_json, args.cohort), args.k, args.title, args.out)))


if __name__ == "__main__":
    main()
