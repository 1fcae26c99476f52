"""Grade with the SWE-bench harness itself: `run_instance` in the instance's docker image, or on Modal (opt-in).

One harness call per unit: the harness creates the container, applies the patch with its chain of apply
commands, runs the eval script, writes report.json and removes the container. Images are the harness's own
(used when present locally, pulled otherwise, never removed); a local task set's instance images are built
here (eval.images) and named as the harness names them. The harness's resume is kept: a unit whose harness
report.json exists is not run again. When the harness writes no report (its "error" instances), the log says
why: a patch that did not apply is `patch_failed`, anything else (image missing, engine down, test timeout)
is `infra_error` with the reason.
"""

from __future__ import annotations

import hashlib
import shutil
import threading
from pathlib import Path
from typing import Any

from eval.grading import harness
from eval.images.instance import resolve_image
from eval.protocols import GradeResult, Task

LOG_FILES = ("report.json", "run_instance.log", "test_output.txt", "eval.sh", "patch.diff")
_LOG_ROOT_LOCK = threading.Lock()
_LOG_ROOT_SET: list[Path] = []  # the root this process pointed the harness at (at most one)


def set_log_root(root: Path | None) -> Path:
    """Point the harness's log directory (a module constant, `logs/run_evaluation` under the working directory
    by default) at `root`; returns the directory in use.

    The first root asked for holds for the whole process: graders of several cohorts may run at once, and the
    harness reads the constant while it works. Units never collide there (the run id is unique per unit and
    patch), and each unit's logs are copied into its own directory anyway.
    """
    from swebench.harness import run_evaluation
    from swebench.harness.modal_eval import run_evaluation_modal

    with _LOG_ROOT_LOCK:
        if root is not None and not _LOG_ROOT_SET:
            run_evaluation.RUN_EVALUATION_LOG_DIR = Path(root).resolve()
            run_evaluation_modal.RUN_EVALUATION_LOG_DIR = Path(root).resolve()
            _LOG_ROOT_SET.append(Path(root).resolve())
        return Path(run_evaluation.RUN_EVALUATION_LOG_DIR)


def harness_run_id(workdir: Path, patch: str = "") -> str:
    """A short container-name-safe run id, stable for a unit's grading directory and patch: the harness's
    resume reuses its report for the same patch, and a changed patch is run afresh."""
    key = f"{Path(workdir).resolve()}\0{hashlib.sha256(patch.encode()).hexdigest()}"
    return "sq-" + hashlib.sha1(key.encode()).hexdigest()[:12]


def from_harness_logs(task: Task, patch: str, log_dir: Path) -> GradeResult:
    """Decide from what the harness left in its log directory for this instance."""
    from swebench.harness.constants import APPLY_PATCH_FAIL

    entry = harness.read_report(log_dir / "report.json", task.instance_id)
    test_output = log_dir / "test_output.txt"
    if entry is not None:
        return harness.to_result(entry, patch, test_output if test_output.is_file() else None)
    log_path = log_dir / "run_instance.log"
    log = log_path.read_text(errors="replace") if log_path.is_file() else ""
    if APPLY_PATCH_FAIL in log:
        return GradeResult("patch_failed", False, log_path=log_path)
    return GradeResult("infra_error", None, infra_reason=f"harness error: {_reason(log)}", log_path=log_path)


def _reason(log: str) -> str:
    for needle in ("timed out", "not found", "Error", "error"):
        lines = [line.strip() for line in log.splitlines() if needle in line]
        if lines:
            return lines[-1][-300:]
    return "no report.json and no error in run_instance.log"


def _copy_logs(src: Path, dest: Path) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    for name in LOG_FILES:
        if (src / name).is_file():
            shutil.copyfile(src / name, dest / name)


class DockerGrader:
    name = "docker"

    def __init__(self, timeout_s: float = 1800, *, log_root: Path | None = None, run_empty: bool = False) -> None:
        self.timeout_s = timeout_s
        self.log_root = log_root
        self.run_empty = run_empty
        self._client: Any = None

    def grade(self, task: Task, patch: str, workdir: Path) -> GradeResult:
        if not patch.strip() and not self.run_empty:
            return GradeResult("empty_patch", False)
        try:
            client = self.client()
            task = resolve_image(client, task)  # a local set's instance image is built here
            spec = harness.test_spec(task)
        except Exception as e:  # no harness, no engine, no image: the environment's failure
            return GradeResult("infra_error", None, infra_reason=str(e).splitlines()[0][:300])
        from swebench.harness import run_evaluation

        run_id = harness_run_id(workdir, patch)
        root = set_log_root(self.log_root)
        run_evaluation.run_instance(
            spec,
            harness.prediction(task, patch),
            client,
            run_id,
            timeout=int(self.timeout_s),
            skip_patch=not patch.strip(),  # the harness's negative-test mode: tests on the base commit
        )
        log_dir = root / run_id / harness.MODEL_NAME / task.instance_id
        _copy_logs(log_dir, Path(workdir))
        return from_harness_logs(task, patch, log_dir)

    def client(self) -> Any:
        if self._client is None:
            from swebench.harness.run_evaluation import _docker_client

            self._client = _docker_client()
            self._client.ping()
        return self._client


class ModalGrader:
    """The harness's Modal support (opt-in): needs `modal` credentials (~/.modal.toml); images build remotely."""

    name = "modal"

    def __init__(self, timeout_s: float = 1800, *, log_root: Path | None = None, run_empty: bool = False) -> None:
        self.timeout_s = timeout_s
        self.log_root = log_root
        self.run_empty = run_empty

    def grade(self, task: Task, patch: str, workdir: Path) -> GradeResult:
        if not patch.strip():
            return GradeResult("empty_patch", False)  # the harness's Modal path has no negative-test mode
        try:
            from swebench.harness.modal_eval import run_instances_modal, validate_modal_credentials

            validate_modal_credentials()
            harness.test_spec(task)
        except Exception as e:
            return GradeResult("infra_error", None, infra_reason=str(e).splitlines()[0][:300])
        run_id = harness_run_id(workdir, patch)
        root = set_log_root(self.log_root)
        pred = harness.prediction(task, patch)
        run_instances_modal({task.instance_id: pred}, [task.raw], [task.raw], run_id, int(self.timeout_s))
        log_dir = root / run_id / harness.MODEL_NAME / task.instance_id
        _copy_logs(log_dir, Path(workdir))
        return from_harness_logs(task, patch, log_dir)
