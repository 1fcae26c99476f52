"""Early stop through the rollout scheduler: a 500 x 3 comparison with the seed's rates (38.67% -> 3.80%) stops at
the instance the sequential test predicts; a comparison without effect goes on; a resumed run takes the same
decision and runs nothing more.

Stand-ins (test doubles, named as such): `ScriptedModelServer` for the vLLM server (every conversation submits at
once), `NoRepoSandbox` for the sandbox (no repository to check out: the agent only submits), and `SeedRatesGrader`
for the SWE-bench harness (resolved or not from a table drawn with the seed's rates, per instance and repeat). The
scheduler, the unit runner, the grading write path, the order, the stopper and `python -m analysis decide` are
the real ones.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from analysis import analyze, sequential
from eval.grading.stream import grade_unit
from eval.protocols import ExecResult, GradeResult, Task
from eval.rollout.run import run_rollouts
from eval.rollout.stopper import EarlyStop, write_order
from eval.spec.load import LoadedSpec, load_spec
from eval.store.run import RunDir, open_run
from store.order import ordered
from store.record_io import write_record
from store.records import CohortRecord
from tests.doubles.scripted_model import ScriptedModelServer, scripted, submit

INSTANCES, REPEATS, MARGIN, ALPHA = 500, 3, 0.03, 0.05
POLICY = {"non_inferiority_margin": MARGIN, "alpha": ALPHA, "corruption_ceiling": 0.02, "max_infra_rate": 0.05,
          "canary_must_be_clean": True}  # fmt: skip


class NoRepoSandbox:
    """Test double for a sandbox: nothing to check out, every command succeeds, a one-line patch."""

    workdir = "/work"

    def execute(self, command: str, timeout_s: float) -> ExecResult:
        return ExecResult(0, "")

    def diff(self) -> str:
        return "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n"

    def close(self) -> None:
        pass


class SeedRatesGrader:
    """Test double for the SWE-bench harness: the outcome of (instance, repeat) comes from a drawn table."""

    def __init__(self, resolved: dict[str, np.ndarray]) -> None:
        self.resolved = resolved

    def grade(self, task: Task, patch: str, workdir: Path) -> GradeResult:
        repeat = int(Path(workdir).parent.name.removeprefix("r"))
        ok = bool(self.resolved[task.instance_id][repeat])
        return GradeResult("resolved" if ok else "unresolved", ok)


def outcome_tables(ids: list[str], seed: int = 7) -> dict[str, dict[str, np.ndarray]]:
    """Per cohort, instance -> resolved per repeat: shared difficulty (ICC 0.35), the seed's rates."""
    rng = np.random.default_rng(seed)
    p = sequential.latent_rates(rng, (1, len(ids)), 0.3867, 0.35)[0]
    rates = {"off": p, "mtp": p * (0.0380 / 0.3867), "same": p}
    return {c: dict(zip(ids, rng.random((len(ids), REPEATS)) < q[:, None], strict=True)) for c, q in rates.items()}


def predicted_stop(tables: dict[str, dict[str, np.ndarray]], cohort: str, ids: list[str]) -> sequential.Outcome:
    d = np.array([tables["off"][i].mean() - tables[cohort][i].mean() for i in ordered(ids)])
    return sequential.monitor(d, sequential.Design(MARGIN, ALPHA))


@pytest.fixture
def big_loaded(loaded: LoadedSpec, cohort_file: Path) -> LoadedSpec:
    cohort_file.write_text(cohort_file.read_text().replace("repeats: 2", f"repeats: {REPEATS}"))
    return load_spec([str(cohort_file), "workloads.swebench.concurrency=4"])


def wide(loaded: LoadedSpec) -> LoadedSpec:
    """The same file with 32 units at once: the runs whose speed the test does not measure go faster."""
    return load_spec([*loaded.sources, "workloads.swebench.concurrency=32"])


def start_run(loaded: LoadedSpec, root: Path, tasks: list[Task]) -> RunDir:
    run = open_run(loaded, root, "early")
    write_order(run.path, [t.instance_id for t in tasks])
    for name, control in (("off", None), ("mtp", "off"), ("same", "off")):
        record = CohortRecord(name=name, label=name, factors={}, factor_labels={}, columns={}, control=control,
                              policy=POLICY, speculative_config=None, build=None, topology=None,
                              tool_call_parser=None, gpus=0, commands=[])  # fmt: skip
        write_record(run.cohort_dir(name) / "cohort.json", record)
    return run


def rollouts(loaded: LoadedSpec, run: RunDir, cohort: str, tasks: list[Task], server: str, grader: SeedRatesGrader,
             stop: EarlyStop | None):  # fmt: skip
    by_id = {t.instance_id: t for t in tasks}

    def graded(unit_dir: Path) -> None:
        grade_unit(grader, "seed-rates-stand-in", by_id[unit_dir.parent.name], unit_dir)

    return asyncio.run(run_rollouts(loaded, run, cohort, server, tasks, on_unit_done=graded,
                                    sandbox_factory=lambda task: NoRepoSandbox(), early_stop=stop))  # fmt: skip


def test_a_500x3_run_with_the_seed_effect_stops_where_the_test_says(big_loaded, tasks, tmp_path):
    many = [replace(tasks[k % len(tasks)], instance_id=f"inst-{k:03d}") for k in range(INSTANCES)]
    ids = [t.instance_id for t in many]
    tables = outcome_tables(ids)
    run = start_run(big_loaded, tmp_path / "results", many)
    every = 6
    reply = scripted([{"content": None, "tool_calls": [submit()]}])
    with ScriptedModelServer(reply) as fast:
        off = rollouts(wide(big_loaded), run, "off", many, fast.base_url, SeedRatesGrader(tables["off"]),
                       EarlyStop(run.path, "off", every_units=300))  # fmt: skip
        assert off.completed == INSTANCES * REPEATS and off.stopped_early is None  # a control never stops
    # Real units take minutes and an ask seconds; the stand-in answers in 0.5 s so that units do not outrun the
    # asks by much more than in a real run (the ask runs beside the scheduler, which does not wait for it).
    with ScriptedModelServer(reply, delay_s=0.5) as server:
        stop = EarlyStop(run.path, "mtp", every_units=every)
        mtp = rollouts(big_loaded, run, "mtp", many, server.base_url, SeedRatesGrader(tables["mtp"]), stop)
        expected = predicted_stop(tables, "mtp", ids)
        record = json.loads((run.cohort_dir("mtp") / "early_stop.json").read_text())
        assert expected.decision == "FAIL" and record["decision"] == "FAIL"
        assert record["decided_at"] == expected.instances <= 40
        # It stopped a few instances after the decision (units that ran while the analysis was asked), not at 500.
        # How many more ran depends on how long the ask took beside the scheduler: a bound of 25 failed once on
        # a loaded machine (52 instances for a decision at 23); 60 leaves room for a slow machine and still fails
        # a run that did not stop.
        ran_instances = len({p.parent.parent.name for p in run.cohort_dir("mtp").glob("units/*/r*/verdict.json")})
        assert expected.instances <= ran_instances <= expected.instances + 60
        assert mtp.not_run == INSTANCES * REPEATS - mtp.completed - mtp.infra_errors > 1300
        assert mtp.stopped_early and "FAIL decided at instance" in mtp.stopped_early
        # The report judges the cohort on what ran: the left-out instances are the saving, not missing data.
        verdict = analyze(run.path).summaries["mtp"]
        assert verdict.verdict == "FAIL"
        assert "rollouts stopped early: FAIL decided at instance" in (verdict.reason or "")
        # A resumed run asks first, takes the same decision (and keeps its record) and runs nothing.
        again = rollouts(big_loaded, run, "mtp", many, server.base_url, SeedRatesGrader(tables["mtp"]),
                         EarlyStop(run.path, "mtp", every_units=every))  # fmt: skip
        assert again.completed == 0 and again.stopped_early == mtp.stopped_early
        assert json.loads((run.cohort_dir("mtp") / "early_stop.json").read_text()) == record
    with ScriptedModelServer(reply) as server:
        # A comparison without effect goes on: 100 instances cannot exclude a 3-point drop.
        few = many[:100]
        same = rollouts(wide(big_loaded), run, "same", few, server.base_url, SeedRatesGrader(tables["same"]),
                        EarlyStop(run.path, "same", every_units=30))  # fmt: skip
        assert same.completed == 100 * REPEATS and same.stopped_early is None
        assert not (run.cohort_dir("same") / "early_stop.json").exists()
