"""The comparison pass over a run directory: control vs reference choice, rewritten records, canary.json."""

from __future__ import annotations

from pathlib import Path

import pytest

from eval.canary.records import ProbeRecord, read_records, write_record
from eval.canary.results import compare_and_summarize, expected_records, reference_cohort
from eval.spec.errors import SpecError
from eval.spec.load import LoadedSpec, load_spec
from eval.store import read_json
from eval.store.run import RunDir, open_run

DEMO = Path(__file__).resolve().parents[3] / "cohorts" / "canary-cpu.yaml"
OVERRIDES = ["workloads.canary.probes_per_mode=1", "workloads.canary.modes=[prefix_hit,prefix_hit_concurrent,fresh]"]


@pytest.fixture
def demo() -> LoadedSpec:
    return load_spec([str(DEMO), *OVERRIDES])


def _write(run: RunDir, cohort: str, outputs: dict[str, list[int] | None]) -> None:
    for mode in ("prefix_hit", "prefix_hit_concurrent", "fresh"):
        for pid in expected_records(mode, 0):
            out = outputs.get(pid, [10, 11, 12, 13])
            rec = ProbeRecord(
                probe_id=pid,
                cohort=cohort,
                mode=mode,
                index=0,
                role=pid.rsplit("-", 1)[1],
                prompt_token_ids=[1, 2],
                output_token_ids=out,
                infra_error=None if out else "HTTP 500: engine dead",
            )
            write_record(run.cohort_dir(cohort), rec)


def test_demo_pattern_is_classified(demo: LoadedSpec, tmp_path: Path) -> None:
    run = open_run(demo, tmp_path, "r")
    bad = {"prefix_hit-000-target": [10, 99, 12, 13], "prefix_hit_concurrent-000-target": [10, 11, 98, 13]}
    dead = dict.fromkeys([p for m in ("prefix_hit", "prefix_hit_concurrent", "fresh") for p in expected_records(m, 0)])
    for cohort in ("fixed-off", "fixed-mtp5", "fixed-reverted-off"):
        _write(run, cohort, {})
    _write(run, "fixed-reverted-mtp5", bad)
    _write(run, "release-off", dead)
    _write(run, "release-mtp5", {"fresh-000-target": [10, 11, 0, 0]})
    s = compare_and_summarize(demo, run, {"fixed-off": 12.5})
    assert {k: v.verdict for k, v in s.items()} == {
        "fixed-off": "reference",
        "fixed-mtp5": "clean",
        "fixed-reverted-off": "clean",
        "fixed-reverted-mtp5": "corrupted",
        "release-off": "failed",
        "release-mtp5": "corrupted",
    }
    assert s["fixed-reverted-mtp5"].first_divergence_histogram == {"1": 1, "2": 1}
    assert s["fixed-reverted-mtp5"].by_mode["fresh"].diverged == 0
    assert s["fixed-mtp5"].reference_cohorts == ["fixed-off"]
    assert s["fixed-reverted-off"].reference_cohorts == ["fixed-off"]  # control cohorts are checked too
    assert s["release-mtp5"].reference_cohorts == ["fixed-off"]  # its control has no output: the reference instead
    recs = read_records(run.cohort_dir("fixed-reverted-mtp5"))
    hit = recs["prefix_hit-000-target"]
    assert (hit.diverged, hit.first_divergence, hit.reference_cohort) == (True, 1, "fixed-reverted-off")
    assert recs["prefix_hit_concurrent-000-concurrent"].diverged is False
    summary = read_json(run.cohort_dir("fixed-off") / "canary.json")
    assert summary["schema_version"] == 1 and summary["wall_s"] == 12.5


def test_reference_must_name_a_cohort(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="no cohort 'nope'"):  # checked when the file loads
        load_spec([str(DEMO), "workloads.canary.reference=nope"])


def test_default_reference_is_the_first_cohort_without_control(tmp_path: Path) -> None:
    loaded = load_spec([str(DEMO), "workloads.canary.reference=null"])
    assert reference_cohort(loaded) == "fixed-off"


def test_server_error_names_the_root_cause(tmp_path: Path) -> None:
    from eval.canary.results import server_error

    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "server.0.log").write_text(
        "(APIServer pid=1) WARNING Found ulimit of 20000 and failed to automatically increase with error current\n"
        "(Worker pid=2) ERROR [multiproc_executor.py:1063] IndexError: index 2 is out of bounds for dimension 0\n"
        "(EngineCore pid=3) ERROR [core.py:1512] RuntimeError: Worker failed with error 'index 2 ...'\n"
        "(APIServer pid=1) ERROR vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue.\n"
    )
    assert server_error(tmp_path) == "IndexError: index 2 is out of bounds for dimension 0"
    assert server_error(tmp_path / "none") is None
