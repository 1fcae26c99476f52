"""The README's quick-start table is what the demo prints (issue 31): the analysis renders the committed demo run
(results/examples/, named in the README under the table) and the lines `scripts/demo.sh` prints from its report
(the `## ` headings and table rows before `## Verdicts`) must equal the README's block line for line.

The committed run itself is held to the locked stack by benchmarks/bench_organism_retrain.py (not in CI: a full
training), which trains the demo's organism and wants the committed weights bit for bit: a drifted stack fails
there, a changed table renderer or an edited README fails here, and neither needs the 15-minute demo in CI.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from analysis.document import to_markdown
from analysis.qualify import analyze
from analysis.report import build

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"


def printed_lines(report_markdown: str) -> list[str]:
    """What scripts/demo.sh prints of a report: awk '/^## Verdicts/{exit} /^## /||/^\\|/'."""
    out = []
    for line in report_markdown.splitlines():
        if line.startswith("## Verdicts"):
            break
        if line.startswith("## ") or line.startswith("|"):
            out.append(line)
    return out


def readme_block() -> tuple[list[str], Path]:
    """The quick start's demo output block (its table lines) and the example run the README names after it."""
    lines, fenced = [], False
    for line in README.read_text(encoding="utf-8").split("\n## Quick start\n", 1)[1].splitlines():
        fenced ^= line.startswith("```")
        if line.startswith("## ") and not fenced:
            break  # the next section (a "## " line inside a code block is output)
        lines.append(line)
    quick = "\n".join(lines) + "\n"
    blocks = re.findall(r"^```(\w*)\n(.*?)^```", quick, flags=re.S | re.M)
    output = next(body for lang, body in blocks if lang != "bash")
    example = re.search(r"`(results/examples/demo-cpu-[\w-]+)`", quick)
    assert example, "the quick start names the demo run it shows (results/examples/demo-cpu-...)"
    return printed_lines(output), ROOT / example.group(1)


def test_the_readme_demo_table_is_the_committed_demo_runs_report(tmp_path: Path) -> None:
    lines, example = readme_block()
    assert lines and any("**FAIL**" in line for line in lines), "the README block shows the demo's cohort tables"
    run = tmp_path / example.name
    shutil.copytree(example, run)  # the analysis reads a run directory; the committed one stays untouched
    rendered = printed_lines(to_markdown(build(analyze(run), {})))
    assert rendered == lines, (
        "README.md's quick-start table differs from what the demo prints for "
        f"{example.relative_to(ROOT)}; README:\n" + "\n".join(lines) + "\nrendered:\n" + "\n".join(rendered)
    )
    # The example's own report, as the demo wrote it, says the same.
    assert printed_lines((example / "report.md").read_text(encoding="utf-8")) == lines


def test_printed_lines_stop_at_the_verdicts() -> None:
    text = "# T\n\n## SWE-bench cohorts\n| a | b |\n| 1 | 2 |\ntext\n## Verdicts\n| x |\n"
    assert printed_lines(text) == ["## SWE-bench cohorts", "| a | b |", "| 1 | 2 |"]
