"""Atomic writes survive a writer killed at any moment: the target is the old file or the new one, whole."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from store.atomic import StoreError, atomic_write_json, read_json, sweep_temp_files

WRITER = """
import sys
from pathlib import Path
from store.atomic import atomic_write_json
target = Path(sys.argv[1])
i = int(sys.argv[2])
while True:
    i += 1
    atomic_write_json(target, {"i": i, "blob": "x" * 400_000, "end": i})
    if i % 5 == 0:
        print(i, flush=True)  # the test kills only once writes are under way
"""


def test_killed_writer_never_leaves_a_half_written_file(tmp_path: Path) -> None:
    target = tmp_path / "verdict.json"
    atomic_write_json(target, {"i": 0, "blob": "x" * 400_000, "end": 0})
    rng = random.Random(7)
    seen = set()
    for k in range(12):
        proc = subprocess.Popen([sys.executable, "-c", WRITER, str(target), str(k * 1_000_000)], stdout=subprocess.PIPE)
        assert proc.stdout is not None
        proc.stdout.readline()  # blocks until the writer has replaced the file five times
        time.sleep(rng.uniform(0.0, 0.05))
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        data = json.loads(target.read_text())  # must parse: never torn
        assert data["i"] == data["end"] and len(data["blob"]) == 400_000
        seen.add(data["i"])
    assert len(seen) > 1, "the writer never got to replace the file"
    sweep_temp_files(tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == ["verdict.json"]


def test_unwritable_directory_is_a_clear_error(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root ignores directory permissions; the disk-full case covers the error path")
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    with pytest.raises(StoreError, match="cannot write"):
        atomic_write_json(locked / "x.json", {"a": 1})


@pytest.fixture
def tiny_disk(tmp_path: Path):
    """A real 1 MiB filesystem (tmpfs), so that a write really meets a full disk."""
    mnt = tmp_path / "tiny"
    mnt.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mnt)], capture_output=True).returncode:
        pytest.skip("cannot mount a tmpfs here (needs root)")
    yield mnt
    subprocess.run(["umount", str(mnt)], check=False)


def test_full_disk_is_a_clear_error_and_keeps_the_old_file(tiny_disk: Path) -> None:
    target = tiny_disk / "grade.json"
    atomic_write_json(target, {"v": 1, "blob": "a" * 300_000})
    with pytest.raises(StoreError, match="No space left"):
        atomic_write_json(target, {"v": 2, "blob": "b" * 2_000_000})
    assert read_json(target)["v"] == 1
    assert [p.name for p in tiny_disk.iterdir()] == ["grade.json"]
    atomic_write_json(target, {"v": 3})  # space is back: writing resumes
    assert read_json(target) == {"v": 3}
