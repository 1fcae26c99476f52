"""specqual's analysis: reads a results directory (never the pipeline) and turns it into tidy tables,
clustered statistics, PASS/FAIL/INCONCLUSIVE verdicts, plots and reports.

    from analysis import load_run, analyze, write_report
    run = load_run("results/my-run")            # tidy DataFrames: run.units, run.turns, run.probes, ...
    result = analyze(run)                       # summaries, paired comparisons, verdicts
    write_report("results/my-run")              # report.md, report.html, summary.json, plots/

Names are imported lazily so that `python -m analysis --help` stays quick.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_EXPORTS = {
    "load_run": "analysis.load",
    "RunData": "analysis.load",
    "NotARunError": "analysis.load",
    "analyze": "analysis.qualify",
    "Analysis": "analysis.qualify",
    "summary_json": "analysis.qualify",
    "write_report": "analysis.report",
    "compare_runs": "analysis.compare_runs",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'analysis' has no attribute {name!r}")
