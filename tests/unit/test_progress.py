"""Progress lines without a terminal (eval.progress): their shape, and the canary's lines per cohort."""

from __future__ import annotations

import io
import time

from rich.console import Console

from eval.canary.progress import CanaryProgress
from eval.progress import Heartbeat, clock, eta, line


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
