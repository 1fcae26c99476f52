"""A stand-in for the rollout runner inside array tasks (the real one runs in
tests/integration/slurm/test_vllm_slurm.py): it writes each unit of its shard slowly, verdict last, skips units
already done, and logs every unit it starts to `<run>/<cohort>/standin-starts.log` so tests can tell which units
ran again after a resubmission."""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

from eval.executors.slurm.shard import ShardPlan, reveal_secret_overrides
from eval.store.atomic import atomic_write_json
from eval.store.run import RunDir
from tests.fixtures.verdicts import write_verdict


def write_units(plan: ShardPlan, instance_ids: list[str]) -> int:
    run = RunDir(Path(plan.run_dir))
    repeats = int(plan.extra.get("repeats", 1))
    sleep_s = float(plan.extra.get("sleep_s", 1.0))
    starts = run.cohort_dir(plan.cohort) / "standin-starts.log"
    for repeat in range(repeats):
        for iid in instance_ids:
            if run.unit_done(plan.cohort, iid, repeat):
                continue
            line = json.dumps({"unit": f"{iid}/r{repeat}", "submission": plan.submission, "pid": os.getpid()})
            with open(starts, "a", encoding="utf-8") as f:
                f.write(line + "\n")
            unit = run.unit_dir(plan.cohort, iid, repeat)
            unit.mkdir(parents=True, exist_ok=True)
            time.sleep(sleep_s)
            write_verdict(unit, "completed", plan.cohort, instance_id=iid, repeat=repeat, seed=repeat)
    return 0


def reveal_sources(plan: ShardPlan, instance_ids: list[str]) -> int:
    """`write_units`, after recording the sha256 of each source the task got back (secret overrides revealed
    from its environment), so a test can check the task saw them without writing them anywhere."""
    sources = reveal_secret_overrides(plan.sources)
    path = RunDir(Path(plan.run_dir)).cohort_dir(plan.cohort) / "standin-sources.json"
    atomic_write_json(path, [hashlib.sha256(s.encode()).hexdigest() for s in sources])
    return write_units(plan, instance_ids)
