"""`specqual probe` refuses bad input with one line and exit code 2, before starting anything."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from eval.cli import app

DEMO = str(Path(__file__).resolve().parents[3] / "cohorts" / "canary-cpu.yaml")


def test_base_url_needs_one_cohort(tmp_path: Path) -> None:
    r = CliRunner().invoke(app, ["probe", DEMO, "--base-url", "http://127.0.0.1:9", "--results", str(tmp_path)])
    assert r.exit_code == 2
    assert "--base-url needs exactly one --cohort" in r.output


def test_unknown_cohort(tmp_path: Path) -> None:
    r = CliRunner().invoke(app, ["probe", DEMO, "--cohort", "nope", "--results", str(tmp_path)])
    assert r.exit_code == 2 and "no cohort 'nope'" in r.output


def test_no_canary_workload(tmp_path: Path) -> None:
    r = CliRunner().invoke(app, ["probe", DEMO, "-c", "workloads.canary.enabled=false", "--results", str(tmp_path)])
    assert r.exit_code == 2 and "no enabled canary workload" in r.output


def test_help_shows_an_example() -> None:
    r = CliRunner().invoke(app, ["probe", "--help"])
    assert r.exit_code == 0 and "specqual probe cohorts/demo-cpu.yaml" in r.output
