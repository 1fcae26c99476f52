"""Progress lines without a terminal (eval.progress): their shape, and the canary's lines per cohort."""

from __future__ import annotations

import io
import os
import time
from pathlib import Path

from rich.console import Console

from eval.canary.progress import CanaryProgress
from eval.progress import FileTally, Heartbeat, clock, eta, line


def test_a_line_has_done_total_infra_elapsed_and_eta() -> None:
    assert line("swebench", "c", 3, 10, 1, 61.5, 3725) == (
        "progress swebench c: 3/10 done, 1 infra, elapsed 0:01:01, ETA 1:02:05"
    )
    assert clock(None) == "-" and eta(0, 5, 10.0) is None and eta(2, 4, 10.0) == 20.0 and eta(2, 0, 1.0) == 0.0


def test_the_canary_prints_lines_for_cohorts_being_probed() -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=False, width=200)
    with CanaryProgress(console, ["a", "b", "c"], probes=4) as progress:
        assert not progress.live
        progress.status("a", "on disk (resumed)")
        progress.advance("a", 4, resumed=True)
        progress.status("b", "probing")
        progress.advance("b", infra=2)
        [only] = progress.lines()  # a finished (resumed) cohort and one not started print nothing meanwhile
        assert only.startswith("progress canary b: 1/4 done, 2 infra, elapsed ") and only.endswith(" (probing)")
    final = out.getvalue().splitlines()
    assert [ln.split(":")[0] for ln in final] == ["progress canary a", "progress canary b"]  # c never started
    assert "\x1b[" not in out.getvalue()


def test_a_heartbeat_prints_while_entered_and_once_at_the_end() -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=False)
    calls: list[int] = []

    def lines() -> list[str]:
        calls.append(1)
        return [f"beat {len(calls)}"]

    with Heartbeat(console, lines, every=0.01):
        while len(calls) < 3:
            time.sleep(0.005)
    assert out.getvalue().splitlines()[-1] == f"beat {len(calls)}" and len(calls) >= 4


def test_a_file_tally_counts_units_done_by_the_file_next_to_them(tmp_path: Path) -> None:
    for n in range(3):
        unit = tmp_path / "c" / "units" / f"i{n}" / "r0"
        unit.mkdir(parents=True)
        (unit / "verdict.json").write_text("{}")
    old = tmp_path / "c" / "units" / "i0" / "r0" / "grade.json"
    old.write_text("{}")
    os.utime(old, (0, 0))  # written long before this stage
    grading = FileTally("grading", "run", tmp_path, "*/units/*/r*/verdict.json", "grade.json")
    fresh = FileTally("classify", "run", tmp_path, "*/units/*/r*/verdict.json", "grade.json", fresh=True)
    assert grading.count() == (1, 3)
    (tmp_path / "c" / "units" / "i1" / "r0" / "grade.json").write_text("{}")
    assert grading.count() == (2, 3)
    assert fresh.count() == (1, 3)  # only the file written since it started
    assert grading.lines()[0].startswith("progress grading run: 2/3 done, 0 infra, elapsed ")
