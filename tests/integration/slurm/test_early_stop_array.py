"""The early stop on a Slurm rollout array (test cluster): once the comparison is decided the array is cancelled,
nothing is resubmitted, early_stop.json says why, and a resumed run submits nothing.

Stand-ins (named as such): the unit writer of test_rollout_array.py inside the array tasks, and
`decided_after_two_instances` for `python -m analysis decide` (the decision itself is tested in
tests/unit/rollout/test_early_stop.py and tests/unit/analysis/).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eval.executors.slurm.rollouts import Runner, run_array
from eval.rollout.stopper import EarlyStop
from eval.store.run import open_run
from store.decisions import Comparison, Decisions
from tests.integration.slurm.test_rollout_array import RUNNER, _loaded, starts

pytestmark = pytest.mark.slurm
COHORT = "stock-off"


def decided_after_two_instances(run_dir: Path) -> Decisions:
    """Stand-in for the analysis: FAIL once two instances have every repeat done."""
    done: dict[str, int] = {}
    for v in (Path(run_dir) / COHORT / "units").glob("*/r*/verdict.json"):
        done[v.parent.parent.name] = done.get(v.parent.parent.name, 0) + 1
    decided = sum(n >= 2 for n in done.values()) >= 2
    mine = Comparison(control="a-control", decision="FAIL" if decided else "INCONCLUSIVE",
                      decided_at=2 if decided else None, prefix=2, planned=6, estimate=0.5, lower=0.2, upper=0.8,
                      margin=0.03, alpha=0.05)  # fmt: skip
    return Decisions(method="stand-in", repeats=1, comparisons={COHORT: mine})


def test_a_decided_comparison_cancels_the_array(tmp_path: Path, job_env: None, local_tasks: Path) -> None:
    loaded = _loaded(shards=6)
    run = open_run(loaded, tmp_path, "r")
    stop = EarlyStop(run.path, COHORT, every_s=0.0, ask=decided_after_two_instances)
    summary = run_array(loaded, run, COHORT, "http://unused", runner=Runner(RUNNER, {"sleep_s": 0.4}), early_stop=stop)
    assert stop.stopped and len(summary.submissions) == 1  # cancelled, not resubmitted
    assert summary.unfinished > 0 and summary.done >= 4
    record = json.loads((run.cohort_dir(COHORT) / "early_stop.json").read_text())
    assert record["decision"] == "FAIL" and "FAIL decided at instance 2 of 6" in record["reason"]
    started = len(starts(run.cohort_dir(COHORT)))
    again = EarlyStop(run.path, COHORT, every_s=0.0, ask=decided_after_two_instances)
    resumed = run_array(loaded, run, COHORT, "http://unused", runner=Runner(RUNNER, {"sleep_s": 0.4}), early_stop=again)
    assert again.stopped and resumed.submissions == [] and len(starts(run.cohort_dir(COHORT))) == started
