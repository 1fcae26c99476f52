"""The bridge to the SWE-bench harness (`swebench` 5.x): test specs, the log parsers and the resolution rules.

Both graders end here: the docker grader reads the report the harness wrote, the local grader asks the harness
to write one from a log of the same shape (markers, `set -x` trace, exit-code line), so "resolved" is decided
by the same code (`swebench.harness.grading.get_eval_report`) on both paths.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from eval.protocols import GradeResult, Task

F2P, P2P = "FAIL_TO_PASS", "PASS_TO_PASS"
TEST_SPEC_KEYS = ("image", "log_parser", "eval_type", "eval_script")
MODEL_NAME = "specqual"


class HarnessError(RuntimeError):
    """The harness cannot grade this task (not installed, or the record lacks what it needs)."""


def require() -> Any:
    """The `swebench.harness.grading` module, or a HarnessError that says how to install it."""
    try:
        from swebench.harness import grading, log_parsers
    except ImportError as e:
        raise HarnessError(f"the SWE-bench harness is not installed ({e}): pip install 'specqual[swebench]'") from e
    if not hasattr(log_parsers, "PARSER_REGISTRY"):
        raise HarnessError("swebench >= 5 is needed (its records name their log parser and eval script)")
    return grading


def test_spec(task: Task) -> Any:
    """The harness's TestSpec for a task, built by the harness itself (`make_test_spec`)."""
    require()
    from swebench.harness.utils import make_test_spec

    missing = [k for k in TEST_SPEC_KEYS if k not in task.raw]
    if missing:
        raise HarnessError(
            f"{task.instance_id}: the record lacks {', '.join(missing)}: swebench 5 grades only records that "
            "carry their eval script and log parser (a current SWE-bench_Verified copy, or the local task set)"
        )
    return make_test_spec(task.raw)


def prediction(task: Task, patch: str | None, model: str = MODEL_NAME) -> dict[str, Any]:
    return {"instance_id": task.instance_id, "model_name_or_path": model, "model_patch": patch}


def eval_report(task: Task, patch: str | None, log_path: Path) -> dict[str, Any]:
    """The harness's report entry for this instance, from a test log (`get_eval_report`)."""
    grading = require()
    report = grading.get_eval_report(
        test_spec=test_spec(task),
        prediction=prediction(task, patch),
        test_log_path=str(log_path),
        include_tests_status=True,
    )
    return report[task.instance_id]


def unfinished(text: str) -> str | None:
    """Why a test log does not describe a finished test run, or None when it does.

    A run that did not finish (its sandbox or container killed, its tests cut off) has no end-of-output marker;
    the harness then parses nothing (`tests: {}`) and reports the patch as not resolved. That says nothing about
    the patch: it is an infra error of grading, graded again on resume (`eval.grading.stream.grade_unit`).
    """
    from swebench.harness.constants import END_TEST_OUTPUT, RESET_FAILED, START_TEST_OUTPUT, TESTS_ERROR, TESTS_TIMEOUT

    for marker, why in (
        (TESTS_TIMEOUT, "the tests timed out"),
        (TESTS_ERROR, "the tests errored"),
        (RESET_FAILED, "the reset failed"),
    ):
        if marker in text:
            return f"grading did not finish: {why} ({marker!r} in the test output)"
    if START_TEST_OUTPUT not in text:
        return "grading did not finish: the test output has no start-of-output marker"
    if END_TEST_OUTPUT not in text.split(START_TEST_OUTPUT, 1)[1]:
        tail = text.strip().splitlines()[-1][-200:] if text.strip() else ""
        return f"grading did not finish: the test output stops before its end-of-output marker (last line: {tail!r})"
    return None


def to_result(entry: dict[str, Any], patch: str | None, log_path: Path | None = None) -> GradeResult:
    """Map a harness report entry to a GradeResult (empty, resolved, unresolved, or an environment failure).

    A test log (`log_path`) that does not describe a finished run (`unfinished`) makes an infra error, never an
    unresolved grade."""
    tests = _tests(entry)
    if patch is None or (not patch.strip() and not entry.get("patch_exists")):
        return GradeResult("empty_patch", False, tests=tests, log_path=log_path)
    if not entry.get("patch_successfully_applied") and log_path is not None:
        why = unfinished(Path(log_path).read_text(errors="replace")) if Path(log_path).is_file() else None
        if why is not None:
            return GradeResult("infra_error", None, infra_reason=why, tests=tests, log_path=log_path)
    if entry.get("resolved"):
        return GradeResult("resolved", True, tests=tests, log_path=log_path)
    if not entry.get("patch_successfully_applied") and entry.get("infra_failure"):
        reason = f"harness: {entry.get('infra_failure_reason', 'environment failure')}"
        return GradeResult("infra_error", None, infra_reason=reason, tests=tests, log_path=log_path)
    return GradeResult("unresolved", False, tests=tests, log_path=log_path)


def _tests(entry: dict[str, Any]) -> dict[str, Any]:
    status = entry.get("tests_status") or {}
    return {key: status[key] for key in (F2P, P2P) if key in status}


def parse_log(log_parser: str, log: str, task: Task | None = None) -> dict[str, str]:
    """Test id -> status, by the harness's parser of that name (e.g. `parse_log_django`)."""
    require()
    from swebench.harness.log_parsers import PARSER_REGISTRY

    if log_parser not in PARSER_REGISTRY:
        raise HarnessError(f"unknown log parser {log_parser!r}")
    spec = test_spec(task) if task is not None else None
    parsed: dict[str, str] = PARSER_REGISTRY[log_parser](log, spec)
    return parsed


def read_report(path: Path, instance_id: str) -> dict[str, Any] | None:
    """The entry of a report.json the harness wrote, or None if it wrote none."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None
    entry = data.get(instance_id) if isinstance(data, dict) else None
    return entry if isinstance(entry, dict) else None
