"""Grade a patch on a local task set in the bwrap sandbox, the way the harness grades in a container.

Steps mirror `swebench.harness.run_evaluation.run_instance`: apply the model patch with the harness's own
chain of apply commands (`GIT_APPLY_CMDS`, a clean tree between attempts, then the already-applied check), run
the instance's eval script (the harness's TestSpec, with its exit-code line), write `test_output.txt`, and let
`get_eval_report` decide. A patch that does not apply is `patch_failed`; a sandbox that cannot start or tests
that run past the limit are `infra_error`.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from eval.grading import harness
from eval.protocols import ExecResult, GradeResult, Task
from eval.sandbox.bwrap import BwrapSandbox, SandboxError

APPLY_TIMEOUT_S = 120


class LocalGrader:
    name = "local"

    def __init__(
        self,
        timeout_s: float = 1800,
        *,
        python: str | None = None,
        memory_gb: float | None = 8.0,
        run_empty: bool = False,
    ) -> None:
        self.timeout_s = timeout_s
        self.python = python
        self.memory_gb = memory_gb
        self.run_empty = run_empty  # validate-gold runs the tests on an empty patch too
        self._pytest_checked: str | None = None

    def grade(self, task: Task, patch: str, workdir: Path) -> GradeResult:
        """Grade `patch`; logs (patch.diff, eval.sh, run_instance.log, test_output.txt) go to `workdir`."""
        workdir = Path(workdir)
        workdir.mkdir(parents=True, exist_ok=True)
        if not patch.strip() and not self.run_empty:
            return GradeResult("empty_patch", False)
        missing = self._missing_pytest()
        if missing:
            return GradeResult("infra_error", None, infra_reason=missing)
        try:
            spec = harness.test_spec(task)
            sandbox = BwrapSandbox(task, python=self.python, memory_gb=self.memory_gb)
        except (harness.HarnessError, SandboxError) as e:
            return GradeResult("infra_error", None, infra_reason=str(e))
        with sandbox:
            return self._run(task, spec, patch, sandbox, workdir)

    def _missing_pytest(self) -> str | None:
        """Without pytest the tests cannot run; that is the environment's fault, never an unresolved patch."""
        if self._pytest_checked is None:
            python = self.python or sys.executable
            done = subprocess.run([python, "-c", "import pytest"], capture_output=True, check=False)
            self._pytest_checked = "" if done.returncode == 0 else f"pytest is not installed in {python}"
        return self._pytest_checked or None

    def _run(self, task: Task, spec: object, patch: str, sandbox: BwrapSandbox, workdir: Path) -> GradeResult:
        from swebench.harness.constants import APPLY_PATCH_FAIL, APPLY_PATCH_PASS

        log = workdir / "run_instance.log"
        (workdir / "patch.diff").write_text(patch, encoding="utf-8")
        if patch.strip():
            applied, output = apply_patch(sandbox, patch)
            marker = APPLY_PATCH_PASS if applied else APPLY_PATCH_FAIL
            log.write_text(f"{marker}:\n{output}\n", encoding="utf-8")
            if not applied:
                return GradeResult("patch_failed", False, log_path=log)
        script = spec.eval_script  # type: ignore[attr-defined]
        (workdir / "eval.sh").write_text(script, encoding="utf-8")
        result = sandbox.execute(f"/bin/bash {sandbox.put('eval.sh', script)}", self.timeout_s)
        output_path = workdir / "test_output.txt"
        text = result.output
        if result.timed_out:  # the harness appends this line too; its infra classifier knows it
            text += f"\n\nTimeout error: {self.timeout_s:g} seconds exceeded."
        output_path.write_text(text, encoding="utf-8")
        if result.timed_out:
            return GradeResult("infra_error", None, f"tests timed out after {self.timeout_s:g} s", log_path=output_path)
        entry = harness.eval_report(task, patch, output_path)
        return harness.to_result(entry, patch, output_path)


def apply_patch(sandbox: BwrapSandbox, patch: str) -> tuple[bool, str]:
    """Apply with the harness's chain of commands; True when one applied (or the patch is already in)."""
    from swebench.harness.run_evaluation import GIT_APPLY_CMDS

    path = sandbox.put("patch.diff", patch)
    result = ExecResult(1, "")
    for attempt, command in enumerate(GIT_APPLY_CMDS):
        if attempt:  # a failed attempt (notably --reject) leaves partial state behind
            sandbox.execute("git checkout -- . ; git clean -fd", APPLY_TIMEOUT_S)
        result = sandbox.execute(f"{command} {path}", APPLY_TIMEOUT_S)
        if result.exit_code == 0:
            return True, result.output
    check = sandbox.execute(f"git apply --check --reverse {path}", APPLY_TIMEOUT_S)
    if check.exit_code == 0:
        return True, "verified already applied"
    return False, result.output
