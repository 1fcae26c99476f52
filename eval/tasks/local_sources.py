"""Source text of the local task set's repositories: each module, its tests, and the tests the fix must pass.

Templates with one placeholder where the buggy and the fixed versions differ; `eval.tasks.local_specs` fills
them in. Kept apart so the specs read as a table.
"""

from __future__ import annotations

CALC = """
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

CALC_TESTS = """
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

CALC_NEW = """

def test_mean():
    assert mean([2, 4, 6]) == 4


def test_mean_single():
    assert mean([5]) == 5
"""

WORDS = """
def count_words(text):
    return len(text.{split})


def capitalize_words(text):
    return " ".join(word.capitalize() for word in text.split(" "))


def is_palindrome(text):
    letters = [c.lower() for c in text if c.isalnum()]
    return letters == letters[::-1]
"""

WORDS_TESTS = """
from textkit.words import capitalize_words, count_words, is_palindrome


def test_count_words_simple():
    assert count_words("one two three") == 3


def test_capitalize_words():
    assert capitalize_words("hello big world") == "Hello Big World"


def test_is_palindrome():
    assert is_palindrome("Never odd or even")
    assert not is_palindrome("python")
"""

WORDS_NEW = """

def test_count_words_multiple_spaces():
    assert count_words("one  two") == 2
    assert count_words("one\\ntwo") == 2


def test_count_words_empty():
    assert count_words("") == 0
"""

INTERVAL = """
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

INTERVAL_TESTS = """
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

INTERVAL_NEW = """

def test_touching_intervals_do_not_overlap():
    assert not Interval(0, 3).overlaps(Interval(3, 6))
    assert not Interval(3, 6).overlaps(Interval(0, 3))
"""

STACK = """
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

STACK_TESTS = """
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

STACK_NEW = """

def test_peek_returns_last_pushed():
    s = Stack()
    s.push(1)
    s.push(2)
    assert s.peek() == 2
    assert len(s) == 2
"""

LEAP = """
def is_leap(year):
    return {rule}


def days_in_year(year):
    return 366 if is_leap(year) else 365


def days_in_february(year):
    return 29 if is_leap(year) else 28
"""

LEAP_TESTS = """
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

LEAP_NEW = """

def test_century_not_leap():
    assert not is_leap(1900)
    assert not is_leap(2100)


def test_days_in_year_1900():
    assert days_in_year(1900) == 365
"""

PAGES = """
def page_count(total, per_page):
    if per_page <= 0:
        raise ValueError("per_page must be positive")
    return {expr}


def page_slice(items, page, per_page):
    start = (page - 1) * per_page
    return items[start : start + per_page]
"""

PAGES_TESTS = """
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

PAGES_NEW = """

def test_partial_last_page():
    assert page_count(11, 5) == 3
    assert page_count(1, 5) == 1
"""
