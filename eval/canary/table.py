"""The canary's terminal table: one row per cohort with per-mode divergence, the histogram and the verdict."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from eval.canary.compare import CohortSummary

STYLE = {
    "clean": "green",
    "reference": "cyan",
    "corrupted": "bold red",
    "failed": "yellow",
    "no-data": "dim",
    "inconclusive": "magenta",
}
SHORT = {
    "prefix_hit": "hit",
    "prefix_hit_concurrent": "hit+conc",
    "fresh": "fresh",
    "tool_aba": "tool",
    "sampler_mix": "sampler",
    "chunked_tail": "chunked",
}


def mode_cell(s: CohortSummary) -> str:
    parts = []
    for mode, m in s.by_mode.items():
        shown = f"{m.corrupted}/{m.compared}" if m.compared else "-"
        if m.diverged != m.corrupted:
            shown += f" ({m.diverged} diff)"
        if m.infra_errors:
            shown += f" ({m.infra_errors} err)"
        parts.append(f"{SHORT.get(mode, mode)} {shown}")
    return "\n".join(parts)


def histogram_cell(s: CohortSummary) -> str:
    return " ".join(f"@{k}:{v}" for k, v in s.first_divergence_histogram.items()) or "-"


def print_table(summaries: dict[str, CohortSummary], labels: dict[str, str], console: Console | None = None) -> None:
    console = console or Console(width=None if Console().is_terminal else 160)
    table = Table(title="canary: requests judged corrupted / compared (diff: token-level differences)")
    cols = ("cohort", "label", "compared against", "corrupted by mode", "first divergence", "acceptance", "verdict")
    for col in cols:
        table.add_column(col)
    for name, s in summaries.items():
        verdict = f"[{STYLE.get(s.verdict, 'default')}]{s.verdict.upper()}[/]"
        against = "(reference)" if s.is_reference else ", ".join(s.reference_cohorts) or "-"
        accepted = "-" if s.acceptance is None else f"{s.acceptance:.2f}"
        table.add_row(name, labels.get(name, ""), against, mode_cell(s), histogram_cell(s), accepted, verdict)
    console.print(table)
    for name, s in summaries.items():
        cause = f" - server log: {s.server_error}" if s.server_error else ""
        console.print(f"  {name}: {s.reason}{cause}", markup=False, soft_wrap=True)
