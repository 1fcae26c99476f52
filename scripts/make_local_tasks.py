#!/usr/bin/env python3
"""Generate the local task set (small real Python repositories in SWE-bench instance format).

Example: python scripts/make_local_tasks.py --out /tmp/local-tasks
Deterministic and offline; the generator lives in eval/tasks/local_set.py.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True, help="directory to write (replaced if it holds a set)")
    args = parser.parse_args(argv)
    from eval.tasks.local_set import generate

    path = generate(args.out)
    count = sum(1 for line in path.read_text().splitlines() if line.strip())
    print(f"wrote {count} instances to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
