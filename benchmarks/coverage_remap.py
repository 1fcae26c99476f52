"""Line numbers of patched overlay files, mapped onto the stock files before coverage data is combined.

A build's overlay (`~/.cache/specqual/overlays/<build>/vllm/...`) is a copy of the stock vLLM package with the build's
patches applied; `bench_coverage.py`'s `[paths]` maps every overlay file onto the stock site-packages file so that the
runs of different builds combine. A file a patch changes keeps the patched line numbers, though, so without this step
its lines and arcs after the patch point were counted against the wrong lines of the stock file (the caveat in
docs/trust/canary.md, "Measured (2026-12-07, third)"). Here each per-process data file is rewritten before `coverage
combine`: for a measured overlay file whose text differs from the stock file, each line and arc is moved through the
two files' longest common blocks (difflib); lines a patch added have no stock line and are dropped. The originals move
to `raw/` beside the data.

    PYTHONPATH=<coverage lib>:<repo> python -m benchmarks.coverage_remap DATA_DIR SITE_PACKAGES

The pure functions (`line_map`, `remap_arcs`, `stock_path`) need no coverage.py; `remap_dir` imports it.
"""

from __future__ import annotations

import difflib
import sys
from collections.abc import Iterable
from pathlib import Path


def line_map(patched: list[str], stock: list[str]) -> dict[int, int]:
    """1-based line of the patched file -> the same line in the stock file, for lines outside the patch's changes."""
    out: dict[int, int] = {}
    matcher = difflib.SequenceMatcher(None, patched, stock, autojunk=False)
    for tag, i1, i2, j1, _ in matcher.get_opcodes():
        if tag == "equal":
            out.update({i1 + k + 1: j1 + k + 1 for k in range(i2 - i1)})
    return out


def remap_arcs(arcs: Iterable[tuple[int, int]], mapping: dict[int, int]) -> set[tuple[int, int]]:
    """Arcs (coverage.py: a negative line is the exit of the code object starting there) through `mapping`; an arc
    with an end that has no stock line is dropped."""
    out: set[tuple[int, int]] = set()
    for a, b in arcs:
        ma, mb = mapping.get(abs(a)), mapping.get(abs(b))
        if ma is not None and mb is not None:
            out.add((ma if a > 0 else -ma, mb if b > 0 else -mb))
    return out


def stock_path(measured: str, site: Path) -> Path | None:
    """The stock file of an overlay file (None for a file outside an overlay)."""
    if "/overlays/" not in measured or "/vllm/" not in measured:
        return None
    tail = measured.split("/overlays/", 1)[1].split("/vllm/", 1)[1]
    return site / "vllm" / tail


def remap_dir(data_dir: Path, site: Path) -> int:
    """Rewrite the per-process data files of `data_dir`; returns how many (data file, source file) pairs moved."""
    from coverage import CoverageData

    moved = 0
    maps: dict[str, dict[int, int] | None] = {}
    raw = data_dir / "raw"
    for path in sorted(data_dir.glob(".coverage.*")):
        if path.name.startswith(".coverage.remapped."):
            continue
        old = CoverageData(basename=str(path))
        old.read()
        new = CoverageData(basename=str(data_dir / f".coverage.remapped.{path.name[len('.coverage.') :]}"))
        for fname in old.measured_files():
            if fname not in maps:
                maps[fname] = _map_of(fname, site)
            mapping = maps[fname]
            arcs = old.arcs(fname)
            if arcs is not None:
                new.add_arcs({fname: remap_arcs(arcs, mapping) if mapping is not None else set(arcs)})
            else:
                lines = old.lines(fname) or []
                new.add_lines({fname: [mapping[n] for n in lines if n in mapping] if mapping is not None else lines})
            moved += mapping is not None
        new.write()
        raw.mkdir(exist_ok=True)
        path.rename(raw / path.name)
    return moved


def _map_of(fname: str, site: Path) -> dict[int, int] | None:
    stock = stock_path(fname, site)
    if stock is None or not stock.is_file() or not Path(fname).is_file():
        return None
    patched_lines = Path(fname).read_text(encoding="utf-8").splitlines()
    stock_lines = stock.read_text(encoding="utf-8").splitlines()
    return None if patched_lines == stock_lines else line_map(patched_lines, stock_lines)


if __name__ == "__main__":
    n = remap_dir(Path(sys.argv[1]), Path(sys.argv[2]))
    print(f"coverage_remap: {n} patched file record(s) mapped onto the stock lines")
