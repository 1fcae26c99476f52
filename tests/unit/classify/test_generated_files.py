"""The generated data files' command line (eval/classify/generated.py): the header names the command that made the
file, and other arguments write nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from eval.classify.generated import write_generated


def test_the_file_starts_with_the_command_and_holds_the_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "words.txt"
    code = write_generated(["--write-x"], "eval.classify.demo", "--write-x", out, lambda: ["alpha", "beta"], "words")
    assert code == 0
    lines = out.read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("# python -m eval.classify.demo --write-x (Python 3.")
    assert lines[0].endswith(": 2 words")
    assert lines[1:] == ["alpha", "beta"]
    assert "2 words ->" in capsys.readouterr().out


def test_other_arguments_are_refused_and_write_nothing(tmp_path: Path) -> None:
    out = tmp_path / "words.txt"
    assert write_generated([], "eval.classify.demo", "--write-x", out, lambda: ["alpha"], "words") == 2
    assert write_generated(["--write-y"], "eval.classify.demo", "--write-x", out, lambda: ["alpha"], "words") == 2
    assert not out.exists()
