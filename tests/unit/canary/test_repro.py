"""`specqual repro` end to end against the toy LM servers: the failing fuzz case of a run directory is confirmed,
shrunk to at most 3 requests, and written as a standalone repro.py that exits 1 against the buggy server and 0
against a clean one (run by a plain interpreter in another directory; it imports no specqual)."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from eval.canary.fuzz.api import judge_case
from eval.canary.fuzz.execute import run_case
from eval.canary.fuzz.generate import GenContext, generate_case
from eval.canary.fuzz.space import fetch_space
from eval.canary.prompts import PromptBook
from eval.canary.records import write_record
from eval.cli import app
from tests.doubles.toy_lm import ToyServer, toy_tokenize


def _run_dir(tmp: Path, ref_url: str, bug_url: str) -> Path:
    """A run directory whose `buggy` cohort has one failing fuzz case (judged against `clean`)."""
    gen = GenContext(
        book=PromptBook(toy_tokenize, 0), space=fetch_space(ref_url), block_size=16, spec_tokens=4, max_model_len=512
    )
    run = tmp / "run"
    for i in range(10):
        case = generate_case(gen, 0, i)
        ref, mine = run_case(case, ref_url, "toy", "clean"), run_case(case, bug_url, "toy", "buggy")
        if any(f.failed for f in judge_case(case, mine, ref)):
            break
    for rec in ref:
        write_record(run / "clean", rec)
    for rec in mine:
        rec.reference_cohort = "clean"
        write_record(run / "buggy", rec)
    spec = {"model": {"served_name": "toy", "dtype": "float32"}, "matrix": {"cohorts": []}}
    (run / "run.json").write_text(json.dumps({"spec": spec, "argv": [], "host": {"name": "test"}}))
    return run


def _repro(script: Path, *args: str) -> int:
    return subprocess.run([sys.executable, "-I", str(script), *args], cwd=script.parent.parent, timeout=120).returncode


def test_repro_shrinks_and_the_script_tells_the_buggy_server_from_a_clean_one(tmp_path: Path) -> None:
    with ToyServer() as clean, ToyServer(bug="penalties") as buggy:
        run = _run_dir(tmp_path, clean.base_url, buggy.base_url)
        args = [str(run), "buggy", "--cohort-url", buggy.base_url, "--reference-url", clean.base_url]
        result = CliRunner().invoke(app, ["repro", *args, "--max-checks", "25", "--repeats", "2"])
        assert result.exit_code == 0, result.output
        out = Path(result.output.strip().splitlines()[-1])
        assert out == run / "buggy" / "repro" and (out / "REPORT.md").is_file()
        case = json.loads((out / "case.json").read_text())
        assert 1 <= len(case["requests"]) <= 3
        script = out / "repro.py"
        tree = ast.parse(script.read_text())
        imports = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        assert "eval" not in imports and "httpx" in imports
        assert _repro(script, "--cohort-url", buggy.base_url) == 1
        assert _repro(script, "--cohort-url", clean.base_url) == 0
        assert _repro(script, "--cohort-url", buggy.base_url, "--reference-url", clean.base_url) == 1
        report = (out / "REPORT.md").read_text()
        assert "first divergence" in report or "differ" in report
        assert "failed in 2/2 runs" in report


def test_repro_without_servers_replays_the_recorded_requests(tmp_path: Path) -> None:
    with ToyServer() as clean, ToyServer(bug="min_tokens") as buggy:
        run = _run_dir(tmp_path, clean.base_url, buggy.base_url)
        result = CliRunner().invoke(app, ["repro", str(run), "buggy"])
        assert result.exit_code == 0, result.output
        assert "Replayed from the recorded run" in (run / "buggy" / "repro" / "REPORT.md").read_text()
        assert _repro(run / "buggy" / "repro" / "repro.py", "--cohort-url", buggy.base_url) == 1
        assert _repro(run / "buggy" / "repro" / "repro.py", "--cohort-url", clean.base_url) == 0
