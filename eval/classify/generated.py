"""The command line of the classifier's generated data files (lexicon.txt, lexicon_wide.txt, wordpairs.txt): each is
made from the English the interpreter and its packages ship, never written by hand, and starts with the command and
the Python version that made it."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path


def write_generated(
    argv: list[str] | None, module: str, flag: str, path: Path, build: Callable[[], list[str]], unit: str
) -> int:
    """`python -m MODULE FLAG`: write `build()`'s lines to `path` under a header naming the command; exit 2 on
    other arguments."""
    args = sys.argv[1:] if argv is None else argv
    if args != [flag]:
        print(f"usage: python -m {module} {flag}", file=sys.stderr)
        return 2
    lines = build()
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    header = f"# python -m {module} {flag} (Python {version}): {len(lines)} {unit}\n"
    path.write_text(header + "\n".join(lines) + "\n", encoding="utf-8")
    print(f"{len(lines)} {unit} -> {path}")
    return 0


def read_words(path: Path) -> frozenset[str]:
    """The words of a generated word list, its `#` header left out; empty if the file is missing."""
    try:
        words = path.read_text(encoding="utf-8").split()
    except OSError:
        return frozenset()
    return frozenset(w for w in words if not w.startswith("#"))
