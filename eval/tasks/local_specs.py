"""The small real Python repositories of the local task set: source at the base commit, the fix, the new tests.

Each bug is the kind a very small model could fix in one edit (an off-by-one, a wrong operator, a wrong index),
and each test file runs in well under a second. `eval.tasks.local_set` turns these into git repositories and
SWE-bench instance records.
"""

from __future__ import annotations

from dataclasses import dataclass

from eval.tasks import local_sources as src


@dataclass(frozen=True)
class RepoSpec:
    name: str  # repository name under the `specqual` owner, and the instance id stem
    files: dict[str, str]  # path -> content at the base commit
    fix: dict[str, str]  # path -> content after the gold patch
    tests: dict[str, str]  # path -> content after the test patch (adds the FAIL_TO_PASS tests)
    problem_statement: str
    fail_to_pass: list[str]
    pass_to_pass: list[str]
    hints_text: str = ""


def _mod(doc: str, body: str) -> str:
    return f'"""{doc}"""\n\n\n{body.strip()}\n'


def _ids(test_file: str, names: str) -> list[str]:
    return [f"{test_file}::{n}" for n in names.split()]


def specs() -> list[RepoSpec]:
    """Every repository of the local task set, in a fixed order."""
    calc_t, words_t, iv_t = "tests/test_stats.py", "tests/test_words.py", "tests/test_core.py"
    stack_t, leap_t, pages_t = "tests/test_stack.py", "tests/test_leap.py", "tests/test_pages.py"
    return [
        RepoSpec(
            name="calc",
            files={
                "calc/stats.py": _mod("Small statistics helpers.", src.CALC.format(den="(len(values) - 1)")),
                calc_t: src.CALC_TESTS.lstrip(),
            },
            fix={"calc/stats.py": _mod("Small statistics helpers.", src.CALC.format(den="len(values)"))},
            tests={calc_t: src.CALC_TESTS.lstrip() + src.CALC_NEW},
            problem_statement="`calc.stats.mean` returns the wrong value.\n\n`mean([2, 4, 6])` returns 6.0 "
            "instead of 4.0, and `mean([5])` raises ZeroDivisionError instead of returning 5.\n",
            fail_to_pass=_ids(calc_t, "test_mean test_mean_single"),
            pass_to_pass=_ids(calc_t, "test_total test_maximum test_mean_empty_raises"),
        ),
        RepoSpec(
            name="textkit",
            files={
                "textkit/words.py": _mod("Word utilities.", src.WORDS.format(split='split(" ")')),
                words_t: src.WORDS_TESTS.lstrip(),
            },
            fix={"textkit/words.py": _mod("Word utilities.", src.WORDS.format(split="split()"))},
            tests={words_t: src.WORDS_TESTS.lstrip() + src.WORDS_NEW},
            problem_statement="`count_words` miscounts text with repeated whitespace.\n\n"
            '`count_words("one  two")` returns 3, `count_words("one\\ntwo")` returns 1 and '
            '`count_words("")` returns 1. Words are separated by any run of whitespace.\n',
            fail_to_pass=_ids(words_t, "test_count_words_multiple_spaces test_count_words_empty"),
            pass_to_pass=_ids(words_t, "test_count_words_simple test_capitalize_words test_is_palindrome"),
        ),
        RepoSpec(
            name="intervals",
            files={
                "intervals/core.py": _mod("Half-open intervals.", src.INTERVAL.format(op="<=")),
                iv_t: src.INTERVAL_TESTS.lstrip(),
            },
            fix={"intervals/core.py": _mod("Half-open intervals.", src.INTERVAL.format(op="<"))},
            tests={iv_t: src.INTERVAL_TESTS.lstrip() + src.INTERVAL_NEW},
            problem_statement="Touching intervals are reported as overlapping.\n\nIntervals are half-open, "
            "so `Interval(0, 3)` and `Interval(3, 6)` share no point, but `overlaps` returns True.\n",
            fail_to_pass=_ids(iv_t, "test_touching_intervals_do_not_overlap"),
            pass_to_pass=_ids(iv_t, "test_length test_contains test_overlap test_invalid"),
        ),
        RepoSpec(
            name="stackq",
            files={
                "stackq/stack.py": _mod("A LIFO stack.", src.STACK.format(index="0")),
                stack_t: src.STACK_TESTS.lstrip(),
            },
            fix={"stackq/stack.py": _mod("A LIFO stack.", src.STACK.format(index="-1"))},
            tests={stack_t: src.STACK_TESTS.lstrip() + src.STACK_NEW},
            problem_statement="`Stack.peek` returns the oldest item instead of the top.\n\nAfter `push(1)` "
            "and `push(2)`, `peek()` returns 1; it should return 2 without removing it.\n",
            fail_to_pass=_ids(stack_t, "test_peek_returns_last_pushed"),
            pass_to_pass=_ids(stack_t, "test_push_pop test_len test_pop_empty_raises"),
        ),
        RepoSpec(
            name="caltools",
            files={
                "caltools/leap.py": _mod("Leap years.", src.LEAP.format(rule="year % 4 == 0")),
                leap_t: src.LEAP_TESTS.lstrip(),
            },
            fix={
                "caltools/leap.py": _mod(
                    "Leap years.", src.LEAP.format(rule="year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)")
                )
            },
            tests={leap_t: src.LEAP_TESTS.lstrip() + src.LEAP_NEW},
            problem_statement="`is_leap(1900)` returns True.\n\nCentury years are leap years only when "
            "divisible by 400: 1900 and 2100 are not leap years, 2000 is.\n",
            fail_to_pass=_ids(leap_t, "test_century_not_leap test_days_in_year_1900"),
            pass_to_pass=_ids(leap_t, "test_leap_2024 test_not_leap_2023 test_leap_2000 test_days_in_february_2024"),
        ),
        RepoSpec(
            name="pager",
            files={
                "pager/pages.py": _mod("Pagination.", src.PAGES.format(expr="total // per_page")),
                pages_t: src.PAGES_TESTS.lstrip(),
            },
            fix={"pager/pages.py": _mod("Pagination.", src.PAGES.format(expr="(total + per_page - 1) // per_page"))},
            tests={pages_t: src.PAGES_TESTS.lstrip() + src.PAGES_NEW},
            problem_statement="`page_count` drops the last, partial page.\n\n`page_count(11, 5)` returns 2; "
            "the 11th item is on a third page.\n",
            fail_to_pass=_ids(pages_t, "test_partial_last_page"),
            pass_to_pass=_ids(pages_t, "test_exact_pages test_zero_items test_page_slice test_invalid_per_page"),
        ),
    ]
