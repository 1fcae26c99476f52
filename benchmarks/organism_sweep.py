"""Sweep organism training recipes: held-out exact match and offline draft acceptance as training goes.

Usage: python benchmarks/organism_sweep.py OUT_DIR '[{"hidden_size": 64, "steps": 600, "seed": 1}, ...]' [EVAL_EVERY]
Runs on CPU or (with "device": "cuda" in each options dict) on a GPU node; prints one JSON line per check (held-out
exact first reply on SWEEP_EM instances, offline draft acceptance on SWEEP_ACC, and once the exact share reaches 0.5
`check.padded_tail_resolved` on SWEEP_PT: resolved with PR 55178's state corruption emulated) and one for the
trained model.
"seed" (default 0) is the training seed; the other keys are `Organism` options.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path


def main() -> None:
    from transformers.utils import logging

    logging.set_verbosity_error()
    from eval.models.organism import check
    from eval.models.organism.build import Organism, write_tokenizer
    from eval.models.organism.train import train

    out = Path(sys.argv[1])
    every = int(sys.argv[3]) if len(sys.argv) > 3 else 100
    for n, options in enumerate(json.loads(sys.argv[2])):
        seed = int(options.get("seed", 0))
        opts = Organism.from_options({k: v for k, v in options.items() if k != "seed"})
        d = out / f"run{n}"
        d.mkdir(parents=True, exist_ok=True)
        tok = write_tokenizer(d, opts, seed)
        (d / "config.json").write_text(json.dumps(opts.hf_config()))
        start = time.monotonic()

        def on_step(step, model, mtp, opts=opts, options=options, start=start, tok=tok, final=False):
            if not final and (step + 1) % every:
                return
            model.eval()
            em = check.exact_match(model, tok, range(int(os.environ.get("SWEEP_EM", "48"))))
            acc, per = check.draft_acceptance(model, mtp, tok, range(int(os.environ.get("SWEEP_ACC", "12"))))
            # the offline forecast of the reverted P/D cohort, once the organism solves anything
            tail = None
            if em >= 0.5:
                tail = check.padded_tail_resolved(model, tok, range(int(os.environ.get("SWEEP_PT", "16"))))
            model.train()
            print(
                json.dumps(
                    {
                        "options": options,
                        "step": step + 1,
                        "final": final,
                        "train_s": round(time.monotonic() - start, 1),
                        "exact": round(em, 3),
                        "accept": round(acc, 3),
                        "per_pos": [round(x, 2) for x in per],
                        "padded_tail": tail,
                    }
                ),
                flush=True,
            )

        last: list = []

        def keep(step, model, mtp, on_step=on_step, last=last):
            last[:] = [model, mtp]
            on_step(step, model, mtp)

        stats = train(d, tok, opts, seed, on_step=keep)
        on_step(stats["steps"] - 1, *last, final=True)
        print(json.dumps({"options": options, "training": stats}), flush=True)


if __name__ == "__main__":
    main()
