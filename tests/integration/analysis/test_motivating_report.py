"""The done-when of the report: the motivating table reproduced exactly from a 500 x 3 x 4 synthetic run,
unpatched MTP-5 FAIL, patched MTP-5 not FAIL (INCONCLUSIVE: the anytime-valid test needs about 650 instances to
exclude a 3-point drop at 3 repeats; docs/trust/analysis.md), and `--fail-on FAIL` gating the exit code."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

ROWS = {
    "unpatched-off": ("Before fix, MTP off", "Unpatched (fix reverted)", "Off", "580 / 1,500", "38.67%", "PASS"),
    "unpatched-mtp5": ("Original regression", "Unpatched (fix reverted)", "5", "57 / 1,500", "3.80%", "FAIL"),
    "patched-off": ("After fix, MTP off", "Patched (PR 55178)", "Off", "573 / 1,500", "38.20%", "PASS"),
    "patched-mtp5": ("After fix, MTP 5", "Patched (PR 55178)", "5", "576 / 1,500", "38.40%", "INCONCLUSIVE"),
}


def test_table_reproduces_the_motivating_numbers(
    motivating_run: Path, motivating_report: subprocess.CompletedProcess[str]
) -> None:
    md = (motivating_run / "report.md").read_text()
    assert "| Cohort | vLLM state handling | MTP | Resolved | Accuracy |" in md
    for label, build, mtp, resolved, accuracy, _ in ROWS.values():
        assert f"| {label} | {build} | {mtp} | {resolved} | {accuracy} |" in md


def test_verdicts_and_exit_code(motivating_run: Path, motivating_report: subprocess.CompletedProcess[str]) -> None:
    assert motivating_report.returncode == 1, motivating_report.stderr
    assert "--fail-on FAIL: unpatched-mtp5" in motivating_report.stderr
    summary = json.loads((motivating_run / "summary.json").read_text())["cohorts"]
    for name, row in ROWS.items():
        assert summary[name]["verdict"] == row[-1], summary[name]["reason"]
    mtp5 = summary["unpatched-mtp5"]
    assert "16/32 probes diverged" in mtp5["reason"] and "significantly beyond the margin" in mtp5["reason"]
    assert "cannot tell yet" in summary["patched-mtp5"]["reason"]
    assert "a verdict would need about" in summary["patched-mtp5"]["reason"]
    assert (summary["unpatched-off"]["resolved"], summary["unpatched-off"]["units"]) == (580, 1500)


def test_comparisons_report_paired_statistics(motivating_run: Path, motivating_report: object) -> None:
    md = (motivating_run / "report.md").read_text()
    section = md.split("## Paired comparisons against each control")[1].split("## Early stopping")[0]
    assert "| Original regression | Before fix, MTP off | 500 | 38.67% | 3.80% | -34.87 (" in section
    assert "| After fix, MTP 5 | After fix, MTP off | 500 | 38.20% | 38.40% | +0.20 (" in section
    assert "| Original regression | FAIL | " in md.split("## Early stopping")[1]
