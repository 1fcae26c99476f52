"""ONE real vLLM CPU server (SmolLM2-135M, cohort stock-off of cohorts/smollm2-cpu.yaml) for every reliability
test of this package: the server-kill test kills it (the stack's watchdog restarts it), the driver-kill test
drives it with `specqual rollout --base-url`. One start-up instead of one per test keeps the tier affordable."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from eval.spec.load import LoadedSpec, load_spec
from eval.stacks import ensure_build, launch
from eval.stacks.models import model_dir
from eval.store.run import RunDir, open_run
from tests.integration.rollout.conftest import AGENT, swebench_overrides, task_dir  # noqa: F401 (a fixture)

COHORT_FILE = Path(__file__).resolve().parents[3] / "cohorts" / "smollm2-cpu.yaml"
COHORT = "stock-off"


@dataclass
class Served:
    loaded: LoadedSpec
    overrides: list[str]  # the `-c` overrides that `loaded` was loaded with (for `specqual rollout` processes)
    results: Path  # the results root; run `server-kill` holds the stack's logs and server_events.jsonl
    run: RunDir
    stack: Any


@pytest.fixture(scope="package")
def served(task_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:  # noqa: F811
    # the local set, bwrap, local grading; 2 repeats of 6 tasks, 2 turns of 64 tokens (as the rollout tier)
    overrides = swebench_overrides(task_dir, **AGENT)
    loaded = load_spec([str(COHORT_FILE), *overrides])
    results = tmp_path_factory.mktemp("reliability")
    run = open_run(loaded, results, "server-kill")
    run.write_cohort(loaded, loaded.cohort(COHORT), [])
    build = ensure_build(loaded.spec, "stock")
    with launch(loaded.spec, loaded.cohort(COHORT), model_dir(loaded.spec), run.path, build) as stack:
        yield Served(loaded, overrides, results, run, stack)
