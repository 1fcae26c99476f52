"""The generated local task set: deterministic, in SWE-bench instance format, and consistent with its repos."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from swebench.harness.utils import make_test_spec
from swebench.types import SWEbenchInstance

from eval.tasks import local_set
from eval.tasks.local_set import ensure, generate


def records(set_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (set_dir / "instances.jsonl").read_text().splitlines()]


def test_generation_is_deterministic(local_set: Path, tmp_path: Path) -> None:
    generate(tmp_path)
    assert (tmp_path / "instances.jsonl").read_bytes() == (local_set / "instances.jsonl").read_bytes()


def test_records_have_every_swebench_field(local_set: Path) -> None:
    rows = records(local_set)
    assert len(rows) >= 6
    for row in rows:
        assert set(SWEbenchInstance.__annotations__) <= set(row)
        assert row["instance_id"] == row["repo"].replace("/", "__") + "-1"
        for key in ("FAIL_TO_PASS", "PASS_TO_PASS"):
            assert isinstance(row[key], str)  # JSON-encoded, like the real dataset
            ids = json.loads(row[key])
            assert ids and all("::" in test_id for test_id in ids)


def test_harness_builds_a_test_spec_from_each_record(local_set: Path) -> None:
    for row in records(local_set):
        spec = make_test_spec(row)
        assert json.loads(row["FAIL_TO_PASS"]) == spec.FAIL_TO_PASS
        assert ">>>>> Start Test Output" in spec.eval_script
        assert ">>>>> Test Exit Code" in spec.eval_script  # the harness added its exit-code line


def test_patches_apply_to_the_base_commit(local_set: Path, tmp_path: Path) -> None:
    for row in records(local_set):
        repo = local_set / "repos" / row["repo"].split("/")[1]
        head = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True)
        assert head.stdout.strip() == row["base_commit"]
        for key in ("patch", "test_patch"):
            patch = tmp_path / f"{row['instance_id']}.{key}"
            patch.write_text(row[key])
            check = subprocess.run(["git", "-C", str(repo), "apply", "--check", str(patch)], capture_output=True)
            assert check.returncode == 0, (row["instance_id"], key, check.stderr)


def test_gold_patch_touches_no_test_file(local_set: Path) -> None:
    for row in records(local_set):
        changed = [line[len("+++ b/") :] for line in row["patch"].splitlines() if line.startswith("+++ b/")]
        assert changed and not any(path.startswith("tests/") for path in changed)


def test_ensure_reuses_a_current_set(local_set: Path, tmp_path: Path) -> None:
    generate(tmp_path)
    marker = tmp_path / "repos" / "calc" / "MARKER"
    marker.write_text("kept")
    ensure(tmp_path)
    assert marker.exists()  # not regenerated
    (tmp_path / "VERSION").write_text("0\n")
    ensure(tmp_path)
    assert not marker.exists()  # an older generator's set is replaced


def test_default_dir_follows_specqual_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPECQUAL_CACHE", str(tmp_path / "cache"))
    assert local_set.default_dir().parent == tmp_path / "cache"
    monkeypatch.delenv("SPECQUAL_CACHE")
    assert local_set.default_dir().parent == Path.home() / ".cache" / "specqual"
