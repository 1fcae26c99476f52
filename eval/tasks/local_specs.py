"""The small real Python repositories of the local task set: source at the base commit, the fix, the new tests.

Each bug is the kind a very small model could fix in one edit (an off-by-one, a wrong operator, a wrong index),
and each test file runs in well under a second. `eval.tasks.local_set` turns these into git repositories and
SWE-bench instance records.
"""

from __future__ import annotations

from dataclasses import dataclass, field


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
    extra: dict[str, str] = field(default_factory=dict)


def _mod(doc: str, body: str) -> str:
    return f'"""{doc}"""\n\n\n{body.strip()}\n'


_CALC = """
def total(values):
    result = 0
    for value in values:
        result += value
    return result


def mean(values):
    if not values:
        raise ValueError("mean of an empty sequence")
    return total(values) / {den}


def maximum(values):
    best = values[0]
    for value in values[1:]:
        if value > best:
            best = value
    return best
"""

_CALC_TESTS = """
import pytest

from calc.stats import maximum, mean, total


def test_total():
    assert total([1, 2, 3]) == 6


def test_maximum():
    assert maximum([3, 9, 2]) == 9


def test_mean_empty_raises():
    with pytest.raises(ValueError):
        mean([])
"""

_CALC_NEW = """

def test_mean():
    assert mean([2, 4, 6]) == 4


def test_mean_single():
    assert mean([5]) == 5
"""

_WORDS = """
def count_words(text):
    return len(text.{split})


def capitalize_words(text):
    return " ".join(word.capitalize() for word in text.split(" "))


def is_palindrome(text):
    letters = [c.lower() for c in text if c.isalnum()]
    return letters == letters[::-1]
"""

_WORDS_TESTS = """
from textkit.words import capitalize_words, count_words, is_palindrome


def test_count_words_simple():
    assert count_words("one two three") == 3


def test_capitalize_words():
    assert capitalize_words("hello big world") == "Hello Big World"


def test_is_palindrome():
    assert is_palindrome("Never odd or even")
    assert not is_palindrome("python")
"""

_WORDS_NEW = """

def test_count_words_multiple_spaces():
    assert count_words("one  two") == 2
    assert count_words("one\\ntwo") == 2


def test_count_words_empty():
    assert count_words("") == 0
"""

_INTERVAL = """
class Interval:
    \"\"\"A half-open interval [start, end).\"\"\"

    def __init__(self, start, end):
        if end < start:
            raise ValueError("end before start")
        self.start = start
        self.end = end

    def length(self):
        return self.end - self.start

    def contains(self, x):
        return self.start <= x < self.end

    def overlaps(self, other):
        return self.start {op} other.end and other.start {op} self.end
"""

_INTERVAL_TESTS = """
import pytest

from intervals.core import Interval


def test_length():
    assert Interval(2, 5).length() == 3


def test_contains():
    assert Interval(0, 3).contains(0)
    assert not Interval(0, 3).contains(3)


def test_overlap():
    assert Interval(0, 5).overlaps(Interval(3, 8))
    assert not Interval(0, 2).overlaps(Interval(4, 6))


def test_invalid():
    with pytest.raises(ValueError):
        Interval(3, 1)
"""

_INTERVAL_NEW = """

def test_touching_intervals_do_not_overlap():
    assert not Interval(0, 3).overlaps(Interval(3, 6))
    assert not Interval(3, 6).overlaps(Interval(0, 3))
"""

_STACK = """
class Stack:
    def __init__(self):
        self._items = []

    def push(self, item):
        self._items.append(item)

    def pop(self):
        if not self._items:
            raise IndexError("pop from an empty stack")
        return self._items.pop()

    def peek(self):
        return self._items[{index}]

    def __len__(self):
        return len(self._items)
"""

_STACK_TESTS = """
import pytest

from stackq.stack import Stack


def test_push_pop():
    s = Stack()
    s.push(1)
    s.push(2)
    assert s.pop() == 2
    assert s.pop() == 1


def test_len():
    s = Stack()
    s.push("a")
    assert len(s) == 1


def test_pop_empty_raises():
    with pytest.raises(IndexError):
        Stack().pop()
"""

_STACK_NEW = """

def test_peek_returns_last_pushed():
    s = Stack()
    s.push(1)
    s.push(2)
    assert s.peek() == 2
    assert len(s) == 2
"""

_LEAP = """
def is_leap(year):
    return {rule}


def days_in_year(year):
    return 366 if is_leap(year) else 365


def days_in_february(year):
    return 29 if is_leap(year) else 28
"""

_LEAP_TESTS = """
from caltools.leap import days_in_february, days_in_year, is_leap


def test_leap_2024():
    assert is_leap(2024)


def test_not_leap_2023():
    assert not is_leap(2023)


def test_leap_2000():
    assert is_leap(2000)


def test_days_in_february_2024():
    assert days_in_february(2024) == 29
"""

_LEAP_NEW = """

def test_century_not_leap():
    assert not is_leap(1900)
    assert not is_leap(2100)


def test_days_in_year_1900():
    assert days_in_year(1900) == 365
"""

_PAGES = """
def page_count(total, per_page):
    if per_page <= 0:
        raise ValueError("per_page must be positive")
    return {expr}


def page_slice(items, page, per_page):
    start = (page - 1) * per_page
    return items[start : start + per_page]
"""

_PAGES_TESTS = """
import pytest

from pager.pages import page_count, page_slice


def test_exact_pages():
    assert page_count(10, 5) == 2


def test_zero_items():
    assert page_count(0, 5) == 0


def test_page_slice():
    assert page_slice(list(range(7)), 2, 3) == [3, 4, 5]


def test_invalid_per_page():
    with pytest.raises(ValueError):
        page_count(3, 0)
"""

_PAGES_NEW = """

def test_partial_last_page():
    assert page_count(11, 5) == 3
    assert page_count(1, 5) == 1
"""


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
                "calc/stats.py": _mod("Small statistics helpers.", _CALC.format(den="(len(values) - 1)")),
                calc_t: _CALC_TESTS.lstrip(),
            },
            fix={"calc/stats.py": _mod("Small statistics helpers.", _CALC.format(den="len(values)"))},
            tests={calc_t: _CALC_TESTS.lstrip() + _CALC_NEW},
            problem_statement="`calc.stats.mean` returns the wrong value.\n\n`mean([2, 4, 6])` returns 6.0 "
            "instead of 4.0, and `mean([5])` raises ZeroDivisionError instead of returning 5.\n",
            fail_to_pass=_ids(calc_t, "test_mean test_mean_single"),
            pass_to_pass=_ids(calc_t, "test_total test_maximum test_mean_empty_raises"),
        ),
        RepoSpec(
            name="textkit",
            files={
                "textkit/words.py": _mod("Word utilities.", _WORDS.format(split='split(" ")')),
                words_t: _WORDS_TESTS.lstrip(),
            },
            fix={"textkit/words.py": _mod("Word utilities.", _WORDS.format(split="split()"))},
            tests={words_t: _WORDS_TESTS.lstrip() + _WORDS_NEW},
            problem_statement="`count_words` miscounts text with repeated whitespace.\n\n"
            '`count_words("one  two")` returns 3, `count_words("one\\ntwo")` returns 1 and '
            '`count_words("")` returns 1. Words are separated by any run of whitespace.\n',
            fail_to_pass=_ids(words_t, "test_count_words_multiple_spaces test_count_words_empty"),
            pass_to_pass=_ids(words_t, "test_count_words_simple test_capitalize_words test_is_palindrome"),
        ),
        RepoSpec(
            name="intervals",
            files={
                "intervals/core.py": _mod("Half-open intervals.", _INTERVAL.format(op="<=")),
                iv_t: _INTERVAL_TESTS.lstrip(),
            },
            fix={"intervals/core.py": _mod("Half-open intervals.", _INTERVAL.format(op="<"))},
            tests={iv_t: _INTERVAL_TESTS.lstrip() + _INTERVAL_NEW},
            problem_statement="Touching intervals are reported as overlapping.\n\nIntervals are half-open, "
            "so `Interval(0, 3)` and `Interval(3, 6)` share no point, but `overlaps` returns True.\n",
            fail_to_pass=_ids(iv_t, "test_touching_intervals_do_not_overlap"),
            pass_to_pass=_ids(iv_t, "test_length test_contains test_overlap test_invalid"),
        ),
        RepoSpec(
            name="stackq",
            files={"stackq/stack.py": _mod("A LIFO stack.", _STACK.format(index="0")), stack_t: _STACK_TESTS.lstrip()},
            fix={"stackq/stack.py": _mod("A LIFO stack.", _STACK.format(index="-1"))},
            tests={stack_t: _STACK_TESTS.lstrip() + _STACK_NEW},
            problem_statement="`Stack.peek` returns the oldest item instead of the top.\n\nAfter `push(1)` "
            "and `push(2)`, `peek()` returns 1; it should return 2 without removing it.\n",
            fail_to_pass=_ids(stack_t, "test_peek_returns_last_pushed"),
            pass_to_pass=_ids(stack_t, "test_push_pop test_len test_pop_empty_raises"),
        ),
        RepoSpec(
            name="caltools",
            files={
                "caltools/leap.py": _mod("Leap years.", _LEAP.format(rule="year % 4 == 0")),
                leap_t: _LEAP_TESTS.lstrip(),
            },
            fix={
                "caltools/leap.py": _mod(
                    "Leap years.", _LEAP.format(rule="year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)")
                )
            },
            tests={leap_t: _LEAP_TESTS.lstrip() + _LEAP_NEW},
            problem_statement="`is_leap(1900)` returns True.\n\nCentury years are leap years only when "
            "divisible by 400: 1900 and 2100 are not leap years, 2000 is.\n",
            fail_to_pass=_ids(leap_t, "test_century_not_leap test_days_in_year_1900"),
            pass_to_pass=_ids(leap_t, "test_leap_2024 test_not_leap_2023 test_leap_2000 test_days_in_february_2024"),
        ),
        RepoSpec(
            name="pager",
            files={
                "pager/pages.py": _mod("Pagination.", _PAGES.format(expr="total // per_page")),
                pages_t: _PAGES_TESTS.lstrip(),
            },
            fix={"pager/pages.py": _mod("Pagination.", _PAGES.format(expr="(total + per_page - 1) // per_page"))},
            tests={pages_t: _PAGES_TESTS.lstrip() + _PAGES_NEW},
            problem_statement="`page_count` drops the last, partial page.\n\n`page_count(11, 5)` returns 2; "
            "the 11th item is on a third page.\n",
            fail_to_pass=_ids(pages_t, "test_partial_last_page"),
            pass_to_pass=_ids(pages_t, "test_exact_pages test_zero_items test_page_slice test_invalid_per_page"),
        ),
    ]
