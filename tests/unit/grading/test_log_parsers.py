"""Real-format test logs of SWE-bench Verified repositories through the harness's own parsers and rules.

The logs under logs/ are written in the exact shape the harness's eval scripts produce for django (its unittest
runner, `--verbosity 2`), sympy (`bin/test -C --verbose`), astropy (`pytest -rA`, with terminal colour codes)
and requests (`pytest -rA`, parsed with the options-aware parser).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from swebench.harness.log_parsers import PARSER_REGISTRY
from swebench.harness.log_parsers.python import MAP_REPO_TO_PARSER_PY

from eval.grading import harness
from tests.unit.grading.harness_task import harness_task, log_text

DJ = "auth_tests.test_validators"
DJ_F2P = [
    f"test_ascii_validator ({DJ}.UsernameValidatorsTests)",
    f"test_unicode_validator ({DJ}.UsernameValidatorsTests)",
]
DJ_P2P = [f"test_help_text ({DJ}.MinimumLengthValidatorTest)", f"test_validate ({DJ}.NumericPasswordValidatorTest)"]
SEP = "astropy/modeling/tests/test_separable.py"


def grade_text(task, text: str, tmp_path: Path, patch: str = "diff --git a/x b/x\n"):
    log = tmp_path / "test_output.txt"
    log.write_text(text, encoding="utf-8")
    return harness.to_result(harness.eval_report(task, patch, log), patch, log)


@pytest.mark.parametrize(
    ("repo", "name"),
    [
        ("django/django", "parse_log_django"),
        ("sympy/sympy", "parse_log_sympy"),
        ("astropy/astropy", "parse_log_astropy"),
        ("psf/requests", "parse_log_requests"),
    ],
)
def test_parser_names_match_the_harness_repo_map(repo: str, name: str) -> None:
    assert PARSER_REGISTRY[name] is MAP_REPO_TO_PARSER_PY[repo]


def test_django_unittest_statuses() -> None:
    status = harness.parse_log("parse_log_django", log_text("django__django-11099.fail.txt"))
    assert status[DJ_F2P[0]] == "FAILED"
    assert status[DJ_P2P[0]] == "PASSED"
    assert status[f"test_validate_django_supplied_file ({DJ}.CommonPasswordValidatorTest)"] == "SKIPPED"


def test_django_failing_then_fixed(tmp_path: Path) -> None:
    task = harness_task("django__django-11099", "django/django", "parse_log_django", DJ_F2P, DJ_P2P)
    before = grade_text(task, log_text("django__django-11099.fail.txt"), tmp_path)
    assert before.status == "unresolved"
    assert before.tests["FAIL_TO_PASS"]["failure"] == DJ_F2P
    assert before.tests["PASS_TO_PASS"]["success"] == DJ_P2P
    after = grade_text(task, log_text("django__django-11099.pass.txt"), tmp_path)
    assert after.status == "resolved"
    assert after.resolved is True


def test_nonzero_exit_with_no_failure_is_not_trusted(tmp_path: Path) -> None:
    """The harness cross-checks the log against the recorded exit status (a patch can print PASSED lines)."""
    task = harness_task("django__django-11099", "django/django", "parse_log_django", DJ_F2P, DJ_P2P)
    text = log_text("django__django-11099.pass.txt").replace("Test Exit Code: 0", "Test Exit Code: 1")
    assert grade_text(task, text, tmp_path).status == "unresolved"


def test_sympy_bin_test(tmp_path: Path) -> None:
    text = log_text("sympy__sympy-20590.fail.txt")
    status = harness.parse_log("parse_log_sympy", text)
    assert status["test_immutable"] == "ERROR"
    assert status["test__aresame"] == "PASSED"
    assert status["sympy/core/tests/test_basic.py:test_immutable"] == "FAILED"
    task = harness_task("sympy__sympy-20590", "sympy/sympy", "parse_log_sympy", ["test_immutable"], ["test_has"])
    assert grade_text(task, text, tmp_path).status == "unresolved"
    fixed = (
        text.replace("test_immutable E", "test_immutable ok")
        .replace("tests/test_basic.py:test_immutable", "")
        .replace("Test Exit Code: 1", "Test Exit Code: 0")
    )
    assert grade_text(task, fixed, tmp_path).status == "resolved"


def test_astropy_pytest_colour_codes_are_stripped() -> None:
    status = harness.parse_log("parse_log_astropy", log_text("astropy__astropy-12907.fail.txt"))
    assert status[f"{SEP}::test_separable[compound_model6-result6]"] == "FAILED"
    assert status[f"{SEP}::test_cdot"] == "PASSED"
    assert sum(1 for s in status.values() if s == "PASSED") == 13


def test_astropy_pass_to_pass_failure_is_unresolved(tmp_path: Path) -> None:
    """Every FAIL_TO_PASS test passes but one PASS_TO_PASS test fails: not resolved."""
    f2p = [f"{SEP}::test_cdot", f"{SEP}::test_cstack"]
    p2p = [f"{SEP}::test_coord_matrix", f"{SEP}::test_separable[compound_model9-result9]"]
    task = harness_task("astropy__astropy-12907", "astropy/astropy", "parse_log_astropy", f2p, p2p)
    result = grade_text(task, log_text("astropy__astropy-12907.fail.txt"), tmp_path)
    assert result.status == "unresolved"
    assert result.tests["FAIL_TO_PASS"]["failure"] == []
    assert result.tests["PASS_TO_PASS"]["failure"] == [p2p[1]]


def test_requests_pytest_options() -> None:
    status = harness.parse_log("parse_log_requests", log_text("psf__requests-2317.fail.txt"))
    assert status["test_requests.py::RequestsTestCase::test_binary_put_method"] == "FAILED"
    # the options-aware parser keeps only the last path component of a path parameter
    assert status["test_requests.py::test_data_argument_accepts_tuples[/form.txt]"] == "PASSED"


def test_log_without_test_markers_is_not_a_pass(tmp_path: Path) -> None:
    task = harness_task("psf__requests-2317", "psf/requests", "parse_log_requests", ["a"], [])
    text = log_text("psf__requests-2317.fail.txt").replace(">>>>> Start Test Output", "")
    result = grade_text(task, text, tmp_path)
    # not a pass, and not a grade either: a log without its markers is a run that did not finish (infra)
    assert result.status == "infra_error"
    assert result.resolved is None


def test_unknown_parser_is_refused() -> None:
    with pytest.raises(harness.HarnessError, match="unknown log parser"):
        harness.parse_log("parse_log_nothing", "")
