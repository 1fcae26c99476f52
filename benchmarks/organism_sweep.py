"""Sweep organism training recipes: held-out exact match and offline draft acceptance as training goes.

Usage: python benchmarks/organism_sweep.py OUT_DIR '[{"hidden_size": 64, "steps": 600}, ...]' [EVAL_EVERY]
Runs on CPU or (with "device": "cuda" in each options dict) on a GPU node; prints one JSON line per check.
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
        opts = Organism.from_options(options)
        d = out / f"run{n}"
        d.mkdir(parents=True, exist_ok=True)
        tok = write_tokenizer(d, opts, 0)
        (d / "config.json").write_text(json.dumps(opts.hf_config()))
        start = time.monotonic()

        def on_step(step, model, mtp, opts=opts, options=options, start=start, tok=tok):
            if (step + 1) % every and step + 1 != opts.steps:
                return
            model.eval()
            em = check.exact_match(model, tok, range(int(os.environ.get("SWEEP_EM", "48"))))
            acc, per = check.draft_acceptance(model, mtp, tok, range(int(os.environ.get("SWEEP_ACC", "12"))))
            model.train()
            print(
                json.dumps(
                    {
                        "options": options,
                        "step": step + 1,
                        "train_s": round(time.monotonic() - start, 1),
                        "exact": round(em, 3),
                        "accept": round(acc, 3),
                        "per_pos": [round(x, 2) for x in per],
                    }
                ),
                flush=True,
            )

        train(d, tok, opts, 0, on_step=on_step)


if __name__ == "__main__":
    main()
