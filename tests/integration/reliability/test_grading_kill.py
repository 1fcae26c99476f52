"""A sandbox killed while a unit is graded: the local grader (real bwrap, the local set's `specqual__calc-1`, a
model patch that fixes the bug and makes the tests slow) loses its bwrap process to SIGKILL mid-test; the grade is
an infra error (the test output stops before its end-of-output marker), never `unresolved`."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

from eval.grading.local import LocalGrader
from eval.protocols import GradeResult
from tests.integration.grading.conftest import edited_patch

FIX = ("calc/stats.py", "return total(values) / (len(values) - 1)", "return total(values) / len(values)")
SLOW = ("calc/stats.py", "def mean(values):", "import time\n\ntime.sleep(60)\n\n\ndef mean(values):")


def eval_sandboxes() -> list[int]:
    """Our bwrap processes that run an eval script (descendants of this test process)."""
    me, found = os.getpid(), []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            pid = int(d.name)
            if "bwrap" not in cmd.split(" ")[0] or "eval.sh" not in cmd:
                continue
            ppid = pid
            while ppid > 1:
                ppid = int((Path("/proc") / str(ppid) / "stat").read_text().rsplit(")", 1)[1].split()[1])
                if ppid == me:
                    found.append(pid)
                    break
        except (OSError, ValueError, IndexError):
            continue
    return found


def test_a_sandbox_killed_mid_grading_is_infra_not_unresolved(tasks, tmp_path: Path) -> None:
    task = next(t for t in tasks if t.instance_id == "specqual__calc-1")
    patch = edited_patch(Path(task.raw["specqual_repo_path"]), tmp_path, [FIX, SLOW])
    out: list[GradeResult] = []
    grading = threading.Thread(
        target=lambda: out.append(LocalGrader(timeout_s=300, memory_gb=4).grade(task, patch, tmp_path / "g"))
    )
    grading.start()
    deadline, killed = time.monotonic() + 120, None
    while time.monotonic() < deadline and killed is None:
        sandboxes = eval_sandboxes()
        if sandboxes:
            time.sleep(3)  # the tests are running (collection sleeps in the patched module)
            os.kill(sandboxes[0], signal.SIGKILL)
            killed = sandboxes[0]
        time.sleep(0.2)
    grading.join(120)
    assert killed is not None and out, "the eval script's sandbox never showed up"
    result = out[0]
    assert (result.status, result.resolved) == ("infra_error", None)
    assert "end-of-output marker" in str(result.infra_reason)
    text = (tmp_path / "g" / "test_output.txt").read_text()
    assert ">>>>> Start Test Output" in text and ">>>>> End Test Output" not in text
