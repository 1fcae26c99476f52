"""Reports from small synthetic runs: files, tables, summary.json, canary-only and SWE-bench-only runs, the CLI."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from analysis.report import write_report


@pytest.fixture(scope="module")
def small_report(small_run: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("report")
    write_report(small_run, out)
    return out


def test_report_files_and_tables(small_report: Path) -> None:
    md = (small_report / "report.md").read_text()
    assert "| Cohort | vLLM state handling | MTP | Resolved | Accuracy | 95% CI | Infra failures |" in md
    assert "| Original regression | Unpatched (fix reverted) | 5 | 7 / 180 | 3.89% |" in md
    assert re.search(
        r"\| After fix, MTP off \| Patched \(PR 55178\) \| Off \| 69 / 175 \| 39\.43% \| [^|]+ \| 5 \|", md
    )
    assert "Topology" not in md.split("## Verdicts")[0]  # a factor that never varies gets no column
    for name in ("accuracy", "labels", "flips", "acceptance_vs_corruption", "repos", "first_divergence"):
        assert (small_report / "plots" / f"{name}.png").stat().st_size > 5000
        assert f"(plots/{name}.png)" in md
    assert "## Example corrupted turns" in md and "\\ufffd" in md


def test_html_is_self_contained(small_report: Path) -> None:
    html = (small_report / "report.html").read_text()
    sources = re.findall(r'<img[^>]*src="([^"]+)"', html)
    assert len(sources) == 6
    assert all(s.startswith("data:image/png;base64,") for s in sources)
    assert 'class="fail"' in html and 'class="pass"' in html


def test_summary_json_schema(small_report: Path) -> None:
    summary = json.loads((small_report / "summary.json").read_text())
    assert summary["schema_version"] == 1
    c = summary["cohorts"]["unpatched-mtp5"]
    keys = {"factors", "units", "resolved", "accuracy", "ci95", "infra_failures", "corrupted_trajectories", "labels"}
    assert keys | {"probes", "verdict", "reason"} <= set(c)
    assert c["factors"] == {"build": "unpatched", "speculative": "mtp5", "topology": "single"}
    assert (c["units"], c["resolved"], c["verdict"]) == (180, 7, "FAIL")
    assert c["probes"] == {"total": 32, "compared": 32, "diverged": 16}
    assert c["ci95"][0] < c["accuracy"] < c["ci95"][1]
    assert summary["cohorts"]["patched-off"]["infra_failures"] == 5
    assert sum(c["labels"].values()) == c["corrupted_trajectories"]
    small = summary["cohorts"]["patched-mtp5"]  # 60 instances cannot show non-inferiority within 3 points
    assert small["verdict"] == "INCONCLUSIVE" and "cannot tell yet" in small["reason"]


def test_power_note_when_the_run_is_too_small_for_the_margin(small_report: Path) -> None:
    md = (small_report / "report.md").read_text()
    assert "**Power note:** the minimum detectable difference" in md


def test_canary_only_run(canary_only_run: Path, tmp_path: Path) -> None:
    _, files = write_report(canary_only_run, tmp_path)
    md = files.markdown.read_text()
    assert "| Cohort | vLLM state handling | MTP | Canary diverged | First divergence | Verdict |" in md
    assert "| Original regression | Unpatched (fix reverted) | 5 | 16 / 32 | token 1 | **FAIL** |" in md
    assert "rests on the canary" in md
    assert (tmp_path / "plots" / "first_divergence.png").exists()
    assert not (tmp_path / "plots" / "accuracy.png").exists()
    cohorts = json.loads(files.summary.read_text())["cohorts"]
    assert cohorts["patched-mtp5"]["units"] is None and cohorts["patched-mtp5"]["accuracy"] is None
    assert cohorts["patched-mtp5"]["verdict"] == "PASS"


def test_swebench_only_run(swebench_only_run: Path, tmp_path: Path) -> None:
    _, files = write_report(swebench_only_run, tmp_path)
    md = files.markdown.read_text()
    assert "Canary diverged" not in md and "## Canary probes" not in md
    cohorts = json.loads(files.summary.read_text())["cohorts"]
    assert cohorts["unpatched-mtp5"]["probes"] is None
    assert cohorts["unpatched-mtp5"]["verdict"] == "FAIL"


def test_an_empty_run_reports_and_never_passes_a_gate(tmp_path: Path) -> None:
    from analysis.report import gate

    (tmp_path / "run.json").write_text(json.dumps({"schema_version": 1, "run_id": "empty", "cohorts": []}))
    result, files = write_report(tmp_path)
    assert "none (no cohorts)" in files.markdown.read_text()
    assert gate(result, "FAIL") and gate(result, "INCONCLUSIVE")
    assert gate(result, None) == []
