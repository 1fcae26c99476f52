"""Slurm client commands that are safe to repeat survive a transient failure; others fail at once.

The `scontrol`/`sbatch` here are test doubles (shell scripts on PATH) standing in for a controller that drops a
client mid-answer, which cannot be provoked on demand from a real slurmctld.
"""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from eval.executors.slurm import cluster

RECORD = "JobId=7 JobName=x JobState=RUNNING ArrayTaskId=N/A NodeList=n1"


def _counting_fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, body: str) -> Path:
    """Put `name` on PATH: a shell script that counts its calls in the returned file, then runs `body` (where `$n`
    is the number of earlier calls)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    count = bin_dir / "count"
    count.write_text("0")
    exe = bin_dir / name
    exe.write_text(f"#!/bin/sh\nn=$(cat {count}); echo $((n+1)) > {count}\n{body}")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    return count


def _sigpipe_then_answer(failures: int) -> str:
    return f'if [ "$n" -lt {failures} ]; then kill -PIPE $$; fi\necho "{RECORD}"\n'


def test_a_query_killed_by_sigpipe_is_retried(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    count = _counting_fake(tmp_path, monkeypatch, "scontrol", _sigpipe_then_answer(1))
    jobs = cluster.show_jobs("7")
    assert [j.job_id for j in jobs] == ["7"] and jobs[0].state == "RUNNING"
    assert count.read_text().strip() == "2"


def test_a_query_that_keeps_failing_says_how_often_it_tried(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    count = _counting_fake(tmp_path, monkeypatch, "scontrol", _sigpipe_then_answer(99))
    monkeypatch.setattr(cluster.time, "sleep", lambda s: None)
    with pytest.raises(cluster.SlurmError, match=r"exit -13\) \(after 4 attempts\)"):
        cluster.show_jobs("7")
    assert count.read_text().strip() == str(cluster.QUERY_ATTEMPTS)


def test_a_real_error_is_not_retried(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    count = _counting_fake(tmp_path, monkeypatch, "scontrol", 'echo "Access denied" >&2; exit 1\n')
    with pytest.raises(cluster.SlurmError, match="Access denied"):
        cluster.show_jobs("7")
    assert count.read_text().strip() == "1"


def test_sbatch_is_never_repeated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    count = _counting_fake(tmp_path, monkeypatch, "sbatch", "kill -PIPE $$\n")
    script = tmp_path / "job.sh"
    script.write_text("#!/bin/sh\n")
    with pytest.raises(cluster.SlurmError, match="exit -13"):
        cluster.submit(script)
    assert count.read_text().strip() == "1"
