"""The docker grader for real: the harness's own `run_instance` on a real engine, with images made here.

Local task set instances by default. With SPECQUAL_SWEBENCH_DATASET=/path/to/verified.parquet (or .jsonl) and
the instance's pulled image present, SPECQUAL_DOCKER_INSTANCE (e.g. astropy__astropy-12907) is graded instead
by the gold/empty test.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from eval.grading.docker import DockerGrader
from eval.grading.local import LocalGrader
from eval.protocols import Task
from tests.docker.conftest import by_id, leftover_containers

pytestmark = pytest.mark.docker


@pytest.fixture(scope="module")
def harness_logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("harness")


@pytest.fixture(scope="module")
def gold_task(docker_client: Any, tasks: list[Task]) -> Task:
    dataset = os.environ.get("SPECQUAL_SWEBENCH_DATASET")
    if not dataset:
        return by_id(tasks, "calc")
    from eval.spec.models import SWEBenchWorkload
    from eval.tasks.load import load_tasks

    instance = os.environ.get("SPECQUAL_DOCKER_INSTANCE", "astropy__astropy-12907")
    workload = SWEBenchWorkload.model_validate(
        {"dataset": "SWE-bench/SWE-bench_Verified", "path": dataset, "instances": [instance]}
    )
    return load_tasks(workload, Path("."))[0]


def test_gold_resolves_empty_does_not_and_a_broken_patch_fails(
    docker_client: Any, gold_task: Task, harness_logs: Path, tmp_path: Path
) -> None:
    grader = DockerGrader(timeout_s=1800, log_root=harness_logs, run_empty=True)
    gold = grader.grade(gold_task, gold_task.patch, tmp_path / "gold")
    assert gold.status == "resolved", gold
    assert (tmp_path / "gold" / "report.json").is_file() and (tmp_path / "gold" / "test_output.txt").is_file()
    empty = grader.grade(gold_task, "", tmp_path / "empty")
    assert empty.status == "unresolved", empty
    broken = "--- a/nothing.py\n+++ b/nothing.py\n@@ -1 +1 @@\n-not there\n+still not\n"
    assert grader.grade(gold_task, broken, tmp_path / "broken").status == "patch_failed"
    assert leftover_containers(docker_client) == []  # the harness removed each container


def test_docker_and_local_graders_agree_unit_by_unit(
    docker_client: Any, tasks: list[Task], harness_logs: Path, tmp_path: Path
) -> None:
    """Every local task's gold patch, and one wrong patch: the same status and the same test outcomes."""
    wrong = by_id(tasks, "intervals")
    wrong_patch = "".join(  # applies, and fixes nothing: `<` becomes `>` in the added lines only
        line.replace(" < ", " > ") if line.startswith("+") and not line.startswith("+++") else line
        for line in wrong.patch.splitlines(keepends=True)
    )
    assert wrong_patch != wrong.patch
    units = [(t, t.patch) for t in tasks] + [(wrong, wrong_patch)]
    docker_grader = DockerGrader(timeout_s=600, log_root=harness_logs)
    local_grader = LocalGrader(timeout_s=600)
    for i, (task, patch) in enumerate(units):
        in_docker = docker_grader.grade(task, patch, tmp_path / f"docker-{i}")
        local = local_grader.grade(task, patch, tmp_path / f"local-{i}")
        assert (in_docker.status, in_docker.tests) == (local.status, local.tests), task.instance_id
    assert [u[0].instance_id for u in units].count(wrong.instance_id) == 2


def containers_created(client: Any, since: float) -> int:
    import time

    events = client.events(since=int(since), until=int(time.time()) + 1, filters={"event": "create"}, decode=True)
    return sum(1 for e in events if e.get("Type") == "container")


def test_the_harness_resume_reuses_its_report_for_the_same_patch_only(
    docker_client: Any, tasks: list[Task], harness_logs: Path, tmp_path: Path
) -> None:
    import time

    task = by_id(tasks, "calc")
    grader = DockerGrader(timeout_s=600, log_root=harness_logs)
    assert grader.grade(task, "", tmp_path / "unit").status == "empty_patch"  # not run unless asked (run_empty)
    assert grader.grade(task, task.patch, tmp_path / "unit").status == "resolved"
    time.sleep(1.1)  # event times are whole seconds
    since = time.time()
    assert grader.grade(task, task.patch, tmp_path / "unit").status == "resolved"
    assert containers_created(docker_client, since) == 0  # the harness returned its report.json
    changed = "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n"
    assert grader.grade(task, changed, tmp_path / "unit").status == "patch_failed"  # a new patch runs afresh
    assert containers_created(docker_client, since) == 1
