"""mini-swe-agent and OpenHands trajectories (hand-written fixtures in their real formats) become specqual unit
directories that `specqual classify` reads."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from eval.cli import app
from eval.importers.common import import_units

FIXTURES = Path(__file__).parent / "fixtures"


def lines(unit: Path) -> list[dict]:
    return [json.loads(x) for x in (unit / "trajectory.jsonl").read_text().splitlines()]


def test_mini_swe_agent_turns_keep_raw_replies_and_format_errors(tmp_path):
    summary = import_units("mini-swe-agent", FIXTURES / "mini", tmp_path / "run", "mini")
    assert summary.units == 2
    unit = tmp_path / "run" / "mini" / "units" / "django__django-11099" / "r0"
    turns = lines(unit)
    assert [t["turn"] for t in turns] == [0, 1, 2, 3]
    assert turns[0]["request_id"] == "chatcmpl-5b0e1c" and turns[0]["finish_reason"] == "tool_calls"
    assert turns[0]["reasoning_content"].startswith("The issue says $")
    assert turns[0]["usage"]["prompt_tokens"] == 1520
    assert turns[0]["observation"].startswith("<returncode>0</returncode>")
    # the reply without a structured call (mini keeps it only on its FormatError message) is a turn of its own
    assert turns[1]["content"].startswith("<tool_call>\n{") and turns[1]["tool_calls"] is None
    assert turns[1]["feedback"].startswith("Tool call error") and turns[1]["observation"] is None
    verdict = json.loads((unit / "verdict.json").read_text())
    assert verdict["status"] == "completed" and verdict["exit_reason"] == "submitted" and verdict["turns"] == 4
    assert verdict["prompt_tokens"] == 1520 + 1702 + 1890 + 2011
    assert (unit / "patch.diff").read_text().startswith("diff --git a/django/contrib/auth/validators.py")
    other = json.loads((unit.parents[1] / "sympy__sympy-20590" / "r0" / "verdict.json").read_text())
    assert other["status"] == "infra_error" and "APIConnectionError" in other["infra_reason"]
    predictions = (tmp_path / "run" / "mini" / "predictions.jsonl").read_text().splitlines()
    assert [json.loads(p)["instance_id"] for p in predictions] == ["django__django-11099"]


def test_openhands_responses_are_deduplicated_and_observations_attached(tmp_path):
    import_units("openhands", FIXTURES / "openhands" / "output.jsonl", tmp_path / "run", "oh")
    unit = tmp_path / "run" / "oh" / "units" / "astropy__astropy-12907" / "r0"
    turns = lines(unit)
    assert [t["request_id"] for t in turns] == ["chatcmpl-b1", "chatcmpl-b2", None, "chatcmpl-b4"]
    assert [c["id"] for c in turns[1]["tool_calls"]] == ["toolu_02", "toolu_03"]  # one response, two actions
    assert turns[1]["observation"] == (
        "The file /workspace/astropy__astropy__4.3/astropy/modeling/separable.py has been edited.\n\n15 passed in 2.31s"
    )
    assert turns[2]["content"] == "The fix is in place and the tests pass." and turns[2]["tool_calls"] is None
    verdict = json.loads((unit / "verdict.json").read_text())
    assert verdict["exit_reason"] == "submitted" and verdict["patch_lines_added"] == 1
    broken = json.loads((unit.parents[1] / "sympy__sympy-20590" / "r0" / "verdict.json").read_text())
    assert broken["status"] == "infra_error" and "runtime disconnected" in broken["infra_reason"]


def test_an_instance_seen_again_gets_the_next_repeat(tmp_path):
    source = FIXTURES / "openhands" / "output.jsonl"
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "output.jsonl").write_text(source.read_text())
    (tmp_path / "b" / "output.jsonl").write_text(source.read_text())
    summary = import_units("openhands", tmp_path, tmp_path / "run", "oh")
    assert summary.units == 4
    assert sorted(p.name for p in (tmp_path / "run" / "oh" / "units" / "astropy__astropy-12907").iterdir()) == [
        "r0",
        "r1",
    ]


def test_imported_runs_classify_with_the_tools_the_agent_offered(tmp_path):
    runner = CliRunner()
    run = tmp_path / "run"
    for fmt, src, cohort in (("mini-swe-agent", "mini", "mini"), ("openhands", "openhands", "oh")):
        argv = ["import", "--format", fmt, str(FIXTURES / src), "--run-dir", str(run), "--cohort", cohort]
        result = runner.invoke(app, [*argv, "--tool-format", "hermes"])
        assert result.exit_code == 0, result.output
    assert runner.invoke(app, ["classify", str(run)]).exit_code == 0
    mini = json.loads((run / "mini" / "units" / "django__django-11099" / "r0" / "labels.json").read_text())
    assert mini["first_corrupted_turn"] == 1 and mini["labels"]["leaked_tool_xml"] == 1
    oh = json.loads((run / "oh" / "units" / "astropy__astropy-12907" / "r0" / "labels.json").read_text())
    assert oh["labels"]["malformed_tool_call"] == 0  # execute_bash, str_replace_editor, finish were offered


def test_bad_sources_are_one_line_and_exit_2(tmp_path):
    runner = CliRunner()
    argv = ["import", "--format", "openhands", str(tmp_path / "nope"), "--run-dir", "r", "--cohort", "c"]
    missing = runner.invoke(app, argv)
    assert missing.exit_code == 2 and "no such file or directory" in missing.stderr
    (tmp_path / "output.jsonl").write_text('{"instance_id": "x"}\n')
    argv = ["import", "--format", "openhands", str(tmp_path / "output.jsonl"), "--run-dir", str(tmp_path / "r")]
    bad = runner.invoke(app, [*argv, "--cohort", "c"])
    assert bad.exit_code == 2 and "not OpenHands output" in bad.stderr
    argv = ["import", "--format", "mini-swe-agent", str(tmp_path), "--run-dir", str(tmp_path / "r"), "--cohort", "c"]
    empty = runner.invoke(app, argv)
    assert empty.exit_code == 2 and "no mini-swe-agent trajectories" in empty.stderr
