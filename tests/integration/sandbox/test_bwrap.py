"""The bwrap sandbox for real: no network, no writes outside the work tree, time limits kill the whole tree."""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path

import pytest

from eval.sandbox.bwrap import BwrapSandbox


@pytest.fixture
def sandbox(task):
    box = BwrapSandbox(task, memory_gb=4)
    yield box
    box.close()


def test_commands_run_in_the_work_tree_at_the_base_commit(sandbox, task) -> None:
    result = sandbox.execute("pwd; git rev-parse HEAD; ls", timeout_s=60)
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert lines[0] == "/testbed"
    assert lines[1] == task.base_commit
    assert "calc" in lines


def test_network_is_unreachable(sandbox) -> None:
    code = "import socket; socket.create_connection(('1.1.1.1', 53), timeout=5)"
    result = sandbox.execute(f'python -c "{code}"', timeout_s=60)
    assert result.exit_code != 0
    assert "Network is unreachable" in result.output


def test_only_loopback_interface(sandbox) -> None:
    result = sandbox.execute("cat /proc/net/dev", timeout_s=30)
    interfaces = [line.split(":")[0].strip() for line in result.output.splitlines()[2:]]
    assert interfaces == ["lo"]


def test_writes_outside_the_work_tree_fail_or_vanish(sandbox, task, tmp_path: Path) -> None:
    source_repo = Path(task.raw["specqual_repo_path"])
    repo_checkout = Path(__file__).resolve().parents[3]  # a host directory outside /tmp
    marker = f"sq-{uuid.uuid4().hex}"
    targets = [f"/etc/{marker}", f"{source_repo}/{marker}", f"{repo_checkout}/{marker}", f"/usr/{marker}", f"/{marker}"]
    for target in targets:
        result = sandbox.execute(f"echo x > {target}", timeout_s=30)
        assert not Path(target).exists(), target  # never reaches the host
        if target.startswith("/tmp/"):
            continue  # under the private /tmp (a checkout there, as CI may use): the write lands in the tmpfs
        assert result.exit_code != 0, target
        # read-only where the host shows through; absent where the host's /tmp is hidden (the task set here)
        assert "Read-only file system" in result.output or "No such file" in result.output, target
    # the host's /tmp (where tmp_path lives) is replaced by a private tmpfs: writes there never reach the host
    assert sandbox.execute(f"mkdir -p {tmp_path} && echo x > {tmp_path}/{marker}", timeout_s=30).exit_code == 0
    assert not (tmp_path / marker).exists()


def test_writes_inside_the_work_tree_land_in_the_units_copy(sandbox, task) -> None:
    assert (
        sandbox.execute("echo hello > NOTES.txt && sed -i 's/result = 0/result = 1/' calc/stats.py", 30).exit_code == 0
    )
    assert (sandbox.host_tree / "NOTES.txt").read_text() == "hello\n"
    diff = sandbox.diff()
    assert "+++ b/NOTES.txt" in diff and "+    result = 1" in diff
    source = Path(task.raw["specqual_repo_path"])
    assert not (source / "NOTES.txt").exists()  # the task set's repository is untouched


def _running(marker: str) -> list[int]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if marker in Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace"):
                found.append(int(pid))
        except OSError:
            continue
    return found


def test_time_limit_kills_the_whole_process_tree(sandbox) -> None:
    marker = f"{uuid.uuid4().int % 10**6}.{uuid.uuid4().int % 10**6}"  # a sleep duration nobody else uses
    command = f"sleep {marker} & setsid sleep {marker} & nohup sleep {marker} >/dev/null 2>&1 & sleep {marker}"
    result = sandbox.execute(command, timeout_s=2)
    assert result.timed_out
    deadline = time.monotonic() + 10  # the kernel tears the PID namespace down; give it a moment
    while _running(f"sleep\x00{marker}") and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _running(f"sleep\x00{marker}") == []


def test_output_is_truncated(sandbox) -> None:
    box_output = sandbox.execute("yes line | head -n 2000000", timeout_s=60).output
    assert "bytes of output truncated" in box_output
    assert len(box_output) < 1_100_000


def test_close_removes_the_copy(task) -> None:
    box = BwrapSandbox(task)
    tree = box.host_tree
    assert tree.is_dir()
    box.close()
    box.close()  # idempotent
    assert not tree.exists()


def test_factory_opens_the_named_sandbox(task) -> None:
    from eval.protocols import Sandbox
    from eval.sandbox.factory import open_sandbox
    from eval.spec.models import SandboxSpec

    box = open_sandbox(SandboxSpec(kind="bwrap", cpus=1, memory_gb=4), task)
    try:
        assert isinstance(box, Sandbox)
        assert box.execute("git rev-parse HEAD", 30).output.strip() == task.base_commit
    finally:
        box.close()


def test_bwrap_found_only_on_path_runs(task, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An offline node unpacks bubblewrap outside /usr/bin and puts it on PATH; commands run with an empty
    environment, so the sandbox must run the binary it found, not the bare name (found: 240 infra errors)."""
    import shutil

    real = shutil.which("bwrap")
    assert real is not None
    marker = tmp_path / "used"
    wrapper = tmp_path / "bin" / "bwrap"
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\necho yes > {marker}\nexec {real} "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("PATH", f"{wrapper.parent}:{os.environ['PATH']}")
    box = BwrapSandbox(task, memory_gb=4)
    try:
        result = box.execute("git rev-parse HEAD", 30)
    finally:
        box.close()
    assert result.output.strip() == task.base_commit
    assert marker.read_text().strip() == "yes"
