"""Benchmark: the classifier's error rates on the real-world corpus (tests/data/corpus, docs/trust/classifier.md).

    .venv/bin/python benchmarks/bench_corpus.py                          # corpus found as the tests find it
    .venv/bin/python benchmarks/bench_corpus.py --corpus PATH --misses   # a given corpus; list misses and alarms

Prints, per split (dev: what the detectors were developed on; test: looked at once at the end; all), the
corrupted replies detected (any label but `truncated`) with each label's recall, the clean turns flagged, and
the share of clean real trajectories with at least one flagged turn.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from eval.classify.corpus import find_corpus, load_corpus, score_corpus

REPO = Path(__file__).resolve().parents[1]


def report(rows: list[dict[str, Any]], misses: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for split in ("dev", "test", None):
        t0 = time.process_time()
        score = score_corpus(rows, split).to_json()
        score["cpu_s"] = round(time.process_time() - t0, 2)
        if not misses:
            score.pop("misses")
            score.pop("false_alarms")
        out[split or "all"] = score
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=None, help="corpus.jsonl(.gz); default: as the tests find it")
    parser.add_argument("--misses", action="store_true", help="list the missed rows and the flagged clean turns")
    args = parser.parse_args()
    path = args.corpus or find_corpus(REPO)
    if path is None or not path.is_file():
        print("error: no corpus (set SPECQUAL_CORPUS or pass --corpus; tests/data/corpus/README.md)", file=sys.stderr)
        return 2
    print(json.dumps(report(load_corpus(path), args.misses), indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
