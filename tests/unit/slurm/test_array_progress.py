"""A job array's rollouts feed the same progress view (or log lines) as local ones: each poll counts the verdicts
the array tasks wrote into the shared run directory since the last one."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console

from eval.executors.slurm.progress import ArrayProgress
from eval.executors.slurm.rollouts import Submission
from eval.rollout.progress import RolloutProgress
from eval.store.run import RunDir
from tests.fixtures.verdicts import write_verdict


def verdict(run: RunDir, iid: str, repeat: int, status: str = "completed") -> None:
    write_verdict(run.unit_dir("c", iid, repeat), status)


def test_each_poll_counts_new_verdicts_and_infra_failures(tmp_path: Path) -> None:
    run = RunDir(tmp_path)
    verdict(run, "a", 0)  # done before this session
    out = io.StringIO()
    with RolloutProgress(Console(file=out, force_terminal=False, width=200)) as view:
        poll = ArrayProgress(run, "c", ["a", "b"], 2, view)
        row = view.cohorts[0]
        assert (row.total, row.done, row.skipped, row.infra_errors) == (4, 1, 1, 0)
        verdict(run, "a", 1)
        verdict(run, "b", 0, "infra_error")
        poll(Submission("7", [["a"], ["b"]]))
        assert (row.done, row.infra_errors) == (3, 1)
        poll(Submission("7", [["a"], ["b"]]))  # nothing new: nothing counted twice
        assert (row.done, row.infra_errors) == (3, 1)
    assert out.getvalue().strip().splitlines()[-1].startswith("progress swebench c: 3/4 done, 1 infra, elapsed ")
