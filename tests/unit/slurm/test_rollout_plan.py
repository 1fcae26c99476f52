"""Shards, unfinished units, shard files, `specqual plan` with executor slurm, and `specqual status` counts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from eval.cli import app
from eval.executors.slurm.record import jobs_of, upsert_job
from eval.executors.slurm.rollouts import absolute_sources, split, unfinished
from eval.executors.slurm.shard import ShardPlan
from eval.executors.status import run_status, unit_counts
from eval.store.atomic import atomic_write_json
from eval.store.run import RunDir
from tests.fixtures.verdicts import write_verdict

REPO = Path(__file__).resolve().parents[3]


def test_split_is_contiguous_balanced_and_never_empty() -> None:
    ids = [f"i{n}" for n in range(7)]
    assert split(ids, 3) == [["i0", "i1", "i2"], ["i3", "i4"], ["i5", "i6"]]
    assert split(ids, 100) == [[i] for i in ids]
    assert split(ids, 1) == [ids]


def verdict(run: RunDir, iid: str, repeat: int, status: str = "completed") -> None:
    write_verdict(run.unit_dir("c", iid, repeat), status)


def test_unfinished_counts_units_without_a_parsing_verdict(tmp_path: Path) -> None:
    run = RunDir(tmp_path)
    verdict(run, "a", 0)
    verdict(run, "a", 1)
    verdict(run, "b", 0, "infra_error")  # done: infra failures are the runner's business
    run.unit_dir("c", "b", 1).mkdir(parents=True)  # started, no verdict
    (run.unit_dir("c", "d", 0)).mkdir(parents=True)
    (run.unit_dir("c", "d", 0) / "verdict.json").write_text("{half")
    assert unfinished(run, "c", ["a", "b", "d", "e"], 2) == ["b", "d", "e"]
    assert unit_counts(tmp_path / "c") == (2, 1, 2)


def test_shard_plan_round_trip_and_absolute_sources(tmp_path: Path) -> None:
    plan = ShardPlan("c", "/r", ["/x.yaml", "a.b=1"], "http://n:1", [["a"], ["b", "c"]], 2, extra={"repeats": 3})
    plan.write(tmp_path / "s.json")
    assert ShardPlan.read(tmp_path / "s.json") == plan
    assert json.loads((tmp_path / "s.json").read_text())["schema_version"] == 1
    sources = absolute_sources([str(REPO / "cohorts" / "slurm-cpu.yaml"), "sampling.seed=3"])
    assert sources == [str(REPO / "cohorts" / "slurm-cpu.yaml"), "sampling.seed=3"]


def test_plan_prints_the_sbatch_scripts() -> None:
    result = CliRunner().invoke(app, ["plan", str(REPO / "cohorts" / "slurm-cpu.yaml"), "--json"])
    assert result.exit_code == 0, result.output
    (cohort,) = json.loads(result.output)["cohorts"]
    stack, rollout = cohort["sbatch"]
    assert "#SBATCH --job-name=specqual-stack-stock-off" in stack and "--key server.0" in stack
    assert "#SBATCH --array=0-2" in rollout and "#SBATCH --time=01:00:00" in rollout
    local = CliRunner().invoke(app, ["plan", str(REPO / "cohorts" / "slurm-cpu.yaml"), "-c", "executor.kind=local"])
    assert local.exit_code == 0 and "sbatch script" not in local.output


def test_status_reads_units_and_recorded_jobs(tmp_path: Path) -> None:
    atomic_write_json(tmp_path / "run.json", {"schema_version": 1, "cohorts": ["c", "d"]})
    run = RunDir(tmp_path)
    verdict(run, "a", 0)
    verdict(run, "b", 0, "infra_error")
    upsert_job(tmp_path / "c", "17", kind="stack", state="RUNNING", nodes=["n1"])
    upsert_job(tmp_path / "c", "18", kind="rollout", task_states={"0": "COMPLETED", "1": "CANCELLED"})
    upsert_job(tmp_path / "c", "17", state="CANCELLED")
    assert [j.job_id for j in jobs_of(tmp_path / "c")] == ["17", "18"]
    c, d = run_status(tmp_path, ask_slurm=False)
    assert (c.done, c.failed, c.running, c.stack) == (1, 1, 0, "cancelled (recorded)")
    assert [(j.kind, j.job_id, j.tasks) for j in c.jobs][1] == ("rollout", "18", {"CANCELLED": 1, "COMPLETED": 1})
    assert (d.stack, d.jobs) == ("not launched", [])
    result = CliRunner().invoke(app, ["status", str(tmp_path), "--json"])
    assert result.exit_code == 0 and json.loads(result.output)["cohorts"][0]["done"] == 1
    missing = CliRunner().invoke(app, ["status", str(tmp_path / "nope")])
    assert missing.exit_code == 2


def test_a_shard_refuses_changed_cohort_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from eval.executors.slurm.shard import rollout_shard

    plan = ShardPlan("stock-off", str(tmp_path), [str(REPO / "cohorts" / "slurm-cpu.yaml")], "http://x", [["a"]])
    plan.spec_hash = "0" * 64
    assert rollout_shard(plan, ["a"]) == 2
    assert "changed since submission" in capsys.readouterr().err
