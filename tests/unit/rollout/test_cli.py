"""`specqual rollout` refuses bad input with one line on stderr and exit code 2, before anything starts."""

from __future__ import annotations

from typer.testing import CliRunner

from eval.cli import app


def test_an_unknown_cohort_is_one_line_and_exit_2(cohort_file, tmp_path):
    argv = ["rollout", str(cohort_file), "--cohort", "nope", "--base-url", "http://127.0.0.1:9", "--results"]
    result = CliRunner().invoke(app, [*argv, str(tmp_path / "results")])
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [result.stderr.strip()]
    assert "no cohort 'nope'" in result.stderr and "local" in result.stderr
    assert not (tmp_path / "results").exists()


def test_an_unknown_feedback_kind_is_refused(cohort_file, tmp_path):
    argv = ["rollout", str(cohort_file), "-c", "workloads.swebench.agent.feedback.bogus=hi", "--cohort", "local"]
    result = CliRunner().invoke(app, [*argv, "--base-url", "http://127.0.0.1:9", "--results", str(tmp_path / "r")])
    assert result.exit_code == 2
    assert "workloads.swebench.agent.feedback" in result.stderr and "bogus" in result.stderr
