"""The live progress view: counters per cohort, rendered as a table; off when not a terminal."""

from __future__ import annotations

import io

from rich.console import Console

from eval.rollout.progress import RolloutProgress


def test_the_table_shows_done_infra_corrupted_turns_and_eta():
    console = Console(file=io.StringIO(), width=160, force_terminal=False)
    view = RolloutProgress(console=console)
    assert view.enabled is False  # not a terminal: no live display
    row = view.cohort("patched-mtp5", total=10, done=4)
    for _ in range(3):
        row.unit_started()
    row.turn()
    row.turn()
    row.unit_finished(infra_error=False)
    row.unit_finished(infra_error=True)
    row.mark_corrupted()
    console.print(view.table())
    text = console.file.getvalue()
    assert "patched-mtp5" in text and "6/10" in text
    row_text = next(line for line in text.splitlines() if "patched-mtp5" in line)
    cells = [c.strip() for c in row_text.replace("┃", "│").split("│") if c.strip()]
    assert cells[:6] == ["patched-mtp5", "6/10", "1", "1", "1", "2"]  # done, running, infra, corrupted, turns
    per_min, turns_s, eta = row.rates()
    assert per_min > 0 and turns_s > 0 and eta is not None and eta > 0
