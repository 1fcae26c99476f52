"""Time per unit of the docker paths against their local counterparts, on the local task set.

    DOCKER_HOST=unix:///var/lib/specqual-docker/docker.sock nice -n 10 .venv/bin/python benchmarks/bench_docker.py

Graders: every local task's gold patch through the docker grader (the harness's `run_instance`) and through
the local grader (bwrap), after one warm-up pass that builds the instance images. Sandboxes: open, five
`true` commands, `diff` + close, per unit, docker and bwrap. Prints medians and means (docs/using/grading.md).
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from eval.grading.docker import DockerGrader
from eval.grading.local import LocalGrader
from eval.sandbox.bwrap import BwrapSandbox
from eval.sandbox.docker import DockerSandbox
from eval.spec.models import SWEBenchWorkload
from eval.tasks.load import load_tasks
from eval.tasks.local_set import generate


def timed(fn: Any, *args: Any) -> tuple[float, Any]:
    started = time.monotonic()
    out = fn(*args)
    return time.monotonic() - started, out


def graders(tasks: list[Any], root: Path) -> None:
    docker, local = DockerGrader(timeout_s=600, log_root=root / "harness"), LocalGrader(timeout_s=600)
    for t in tasks:  # warm-up: builds the instance images once
        docker.grade(t, t.patch, root / "warm" / t.instance_id)
    for name, grader in (("docker grader", docker), ("local grader", local)):
        times = []
        for t in tasks:
            s, result = timed(grader.grade, t, t.patch, root / name / t.instance_id)
            assert result.status == "resolved", result
            times.append(s)
        print(f"{name}: {statistics.median(times):.2f} s median, {statistics.mean(times):.2f} s mean per unit")


def sandboxes(tasks: list[Any]) -> None:
    for name, cls in (("docker sandbox", DockerSandbox), ("bwrap sandbox", BwrapSandbox)):
        opens, commands, closes = [], [], []
        for t in tasks:
            s, box = timed(lambda task, kind=cls: kind(task, cpus=1, memory_gb=4), t)
            opens.append(s)
            commands += [timed(box.execute, "true", 30)[0] for _ in range(5)]
            closes.append(timed(lambda b: (b.diff(), b.close()), box)[0])
        m = statistics.median
        print(f"{name}: open {m(opens):.2f} s, command {m(commands):.3f} s, diff + close {m(closes):.2f} s (medians)")


def main() -> None:
    root = Path(tempfile.mkdtemp(prefix="bench-docker-"))
    generate(root / "set")
    workload = SWEBenchWorkload.model_validate({"dataset": "specqual/local", "path": str(root / "set")})
    tasks = load_tasks(workload, root / "set")
    graders(tasks, root)
    sandboxes(tasks)


if __name__ == "__main__":
    main()
