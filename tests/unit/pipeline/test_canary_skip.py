"""policy.skip_rollouts_on_canary_fail: a cohort whose canary failed skips its SWE-bench rollouts in `specqual run`."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from eval.pipeline import canary_failed
from eval.spec.load import load_spec
from eval.store.run import open_run
from tests.unit.canary.test_results import DEMO, OVERRIDES, _write


def test_only_a_failed_canary_skips_and_only_when_the_policy_asks(tmp_path: Path) -> None:
    loaded = load_spec([str(DEMO), *OVERRIDES, "policy.skip_rollouts_on_canary_fail=true"])
    run = open_run(loaded, tmp_path, "r")
    for cohort in ("fixed-off", "fixed-mtp5", "fixed-reverted-off"):
        _write(run, cohort, {})
    _write(run, "fixed-reverted-mtp5", {"prefix_hit-000-target": [10, 99, 12, 13]})
    console = Console(record=True, width=200)
    assert canary_failed(loaded, run, loaded.cohort("fixed-reverted-mtp5"), console)
    assert "fixed-reverted-mtp5: canary corrupted: SWE-bench rollouts skipped" in console.export_text()
    assert not canary_failed(loaded, run, loaded.cohort("fixed-mtp5"), console)
    default = load_spec([str(DEMO), *OVERRIDES])
    assert not canary_failed(default, run, default.cohort("fixed-reverted-mtp5"), console)
