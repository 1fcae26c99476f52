"""bench_coverage's line mapping: a patched overlay file's lines and arcs land on the stock file's lines (lines a patch
added are dropped), so coverage of patched files is not counted against shifted lines."""

from __future__ import annotations

from pathlib import Path

from benchmarks.coverage_remap import line_map, remap_arcs, stock_path


def test_lines_after_an_inserted_hunk_map_back_and_added_lines_are_dropped() -> None:
    stock = ["def f(x):", "    if x:", "        return 1", "    return 2", "", "def g():", "    return f(0)"]
    patched = [*stock[:2], "        # patch", "        x = x + 0", *stock[2:]]
    mapping = line_map(patched, stock)
    assert mapping[1] == 1 and mapping[2] == 2 and 3 not in mapping and 4 not in mapping
    assert mapping[5] == 3 and mapping[9] == 7
    # arcs: 2->5 (the patched `return 1`), 5->-1 (exit of f), 8->9, and one into an added line
    arcs = remap_arcs([(2, 5), (5, -1), (8, 9), (2, 3), (-1, 1)], mapping)
    assert arcs == {(2, 3), (3, -1), (6, 7), (-1, 1)}


def test_only_overlay_files_have_a_stock_file() -> None:
    site = Path("/env/lib/python3.11/site-packages")
    overlay = "/root/.cache/specqual/overlays/stock-62e6/vllm/v1/structured_output/__init__.py"
    assert stock_path(overlay, site) == site / "vllm/v1/structured_output/__init__.py"
    assert stock_path(str(site / "vllm/v1/sample/sampler.py"), site) is None
