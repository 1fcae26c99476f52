"""`python -m analysis report RUN_DIR`: report.md, a self-contained report.html, summary.json and plots/*.png.

from analysis.report import write_report
paths = write_report("results/my-run")          # into the run directory
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from analysis import plots, sections, uptime
from analysis.document import Block, to_html, to_markdown
from analysis.qualify import Analysis, analyze, summary_json
from store.atomic import atomic_write_text
from store.record_io import write_record


@dataclass(frozen=True)
class ReportFiles:
    markdown: Path
    html: Path
    summary: Path
    plots: list[Path]


def make_plots(result: Analysis, plot_dir: Path) -> dict[str, str]:
    """Plot name -> file name, for the plots this run has data for."""
    made = {}
    for fn in (*plots.ALL, uptime.uptime_acceptance):
        name = fn(result, plot_dir)
        if name:
            made[fn.__name__] = name
    return made


def build(result: Analysis, made: dict[str, str]) -> list[Block]:
    blocks: list[Block] = [*sections.header(result), *sections.cohort_table(result, made.get("accuracy"))]
    blocks += sections.verdicts(result)
    blocks += sections.comparisons(result, made)
    blocks += sections.sequential(result)
    blocks += sections.corruption(result, made)
    blocks += sections.canary(result, made)
    blocks += uptime.section(result, made)
    blocks += sections.repos(result, made)
    blocks += sections.provenance(result)
    blocks += sections.examples(result)
    return blocks


def write_report(run_dir: Path | str, out: Path | str | None = None) -> tuple[Analysis, ReportFiles]:
    """Analyse a run and write the report files into `out` (default: the run directory)."""
    result = analyze(run_dir)
    out_dir = Path(out) if out is not None else result.run.path
    made = make_plots(result, out_dir / "plots")
    blocks = build(result, made)
    title = f"Qualification report: {result.run.meta.get('name') or result.run.path.name}"
    files = ReportFiles(out_dir / "report.md", out_dir / "report.html", out_dir / "summary.json",
                        [out_dir / "plots" / name for name in made.values()])  # fmt: skip
    atomic_write_text(files.markdown, to_markdown(blocks))
    atomic_write_text(files.html, to_html(blocks, title, out_dir))
    write_record(files.summary, summary_json(result))
    return result, files


FAIL_LEVELS = {"FAIL": {"FAIL"}, "INCONCLUSIVE": {"FAIL", "INCONCLUSIVE"}}


def gate(result: Analysis, fail_on: str | None) -> list[str]:
    """Cohorts whose verdict trips `--fail-on` (FAIL: any FAIL; INCONCLUSIVE: any FAIL or INCONCLUSIVE)."""
    if not fail_on:
        return []
    if not result.summaries:
        return ["(the run has no cohorts: nothing qualified)"]
    bad = FAIL_LEVELS[fail_on]
    return [name for name, v in result.verdicts().items() if v in bad]
