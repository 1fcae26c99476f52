"""Rebuild README.md's reference part from docs/*.md and benchmarks/README.md.

README.md = a hand-written head (quick start, CLI, cohort files, results), then the marker line, then each docs
file with its headings shifted to level 2, then benchmarks/README.md, then the hand-written "## Development".
Edit the docs files, then run:

    .venv/bin/python scripts/merge_readme.py           # rewrite README.md
    .venv/bin/python scripts/merge_readme.py --check   # exit 1 if README.md is stale (a unit test runs this)
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MARKER = "<!-- merged sections: docs/*.md -->"
DOCS = ["stacks", "canary", "rollouts", "grading", "classifier", "analysis", "slurm", "gpu", "reliability"]
HEADING = re.compile(r"^(#+) ")


def shift_headings(text: str, to_level: int) -> str:
    """Shift headings outside code fences so the smallest becomes `to_level` (never above level 2)."""
    lines = text.strip().splitlines()
    levels, fenced = [], False
    for line in lines:
        fenced ^= line.startswith("```")
        if not fenced and (m := HEADING.match(line)):
            levels.append(len(m.group(1)))
    shift = to_level - min(levels, default=to_level)
    out, fenced = [], False
    for line in lines:
        fenced ^= line.startswith("```")
        m = HEADING.match(line)
        if m and not fenced:
            line = "#" * min(6, max(2, len(m.group(1)) + shift)) + line[len(m.group(1)) :]
        out.append(line)
    return "\n".join(out)


def merged(readme: str, root: Path = ROOT) -> str:
    head = readme.split(MARKER)[0] if MARKER in readme else readme.split("## Development")[0]
    development = "## Development" + readme.split("## Development")[-1]
    parts = [
        shift_headings((root / "docs" / f"{n}.md").read_text(), 2) for n in DOCS if (root / "docs" / f"{n}.md").exists()
    ]
    bench = root / "benchmarks" / "README.md"
    if bench.exists():
        parts.append(shift_headings(bench.read_text(), 2))
    return head.rstrip() + "\n\n" + MARKER + "\n\n" + "\n\n".join(parts) + "\n\n" + development.strip() + "\n"


def main(argv: list[str]) -> int:
    path = ROOT / "README.md"
    current = path.read_text()
    new = merged(current)
    if "--check" in argv:
        if new != current:
            print("README.md is stale: run .venv/bin/python scripts/merge_readme.py", file=sys.stderr)
            return 1
        return 0
    path.write_text(new)
    print(f"README.md: {len(new.splitlines())} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
