"""Near-missed names for `identifier_corruption`: a name the prompt contains (`isVisibleWhenInTBs`,
`calculate_total`, `django/db/models/query.py`) written with one character dropped, doubled, changed or two
swapped (`isVisibelWhenInTBs`, `calculate_totl`, `proccess_data`).

Decidable only for names that are clearly identifiers and edits that are clearly slips:
  - the name is at least MIN_NAME characters and has a `_`, a camel hump (`aB`), a `/` or a `.` (an
    identifier, a path, a dotted module or file name): plain words never count;
  - the edit sits inside a word segment of at least MIN_SEGMENT letters (segments split at `_ . - /`,
    digits and camel humps), not on its first or last letter: `parse` -> `parser`, `get_x` -> `set_x`,
    `item` -> `items` are how new names are made; case changes and separator edits never count;
  - the written form appears nowhere in the conversation, the original does (checked by the caller);
  - a capital I and a small L swapped anywhere but first (`getUserById` -> `getUserByld`) is always a slip.
Only the prompt's names are indexed (the request's messages, a trajectory's task): tool results are indexed
by `eval.classify.identifiers`, whose digit and path rules are cheap enough for their size.

IDs are stricter still: a UUID or a hash (16+ hex digits and dashes, 4+ digits) is never derived by hand, so
any single edit of one (`...-cc9eb8773a92` -> `...-cceb8773a92`) is a slip (`id_slip`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

MIN_NAME = 8
MIN_SEGMENT = 5
_SEGMENT = re.compile(rb"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")
_HUMP = re.compile(rb"[a-z][A-Z]")


_ID = re.compile(rb"[0-9a-fA-F][0-9a-fA-F-]{14,}[0-9a-fA-F]")
_CONFUSABLE = frozenset({(b"I", b"l"), (b"l", b"I")})


def is_id(tok: bytes) -> bool:
    """A UUID or a hex hash: 16+ hex digits and dashes, at least four of them decimal digits, and letters."""
    if _ID.fullmatch(tok) is None:
        return False
    digits = sum(48 <= c <= 57 for c in tok)
    return digits >= 4 and digits < len(tok) - tok.count(b"-")


def id_slip(original: bytes, written: bytes) -> bool:
    """One edit between two IDs of the same shape (dashes where they were)."""
    if not (is_id(original) and is_id(written)) or original.lower() == written.lower():
        return False
    if original.count(b"-") != written.count(b"-"):
        return False
    return _edit_position(original, written) is not None


# A random ID of n hex digits shares a run of matching characters with another one only by chance: two IDs within
# n // ID_CHARS_PER_EDIT edits are one ID copied with slips (the chance that a random 32-digit ID lies within 3 edits
# of a given one is below 1e-30), not two IDs. Applies to IDs of MIN_NEAR_ID characters or more.
ID_CHARS_PER_EDIT = 10
MIN_NEAR_ID = 20


def id_near_miss(original: bytes, written: bytes) -> bool:
    """`written` is `original` (a long UUID or hash) copied with a few edits (at most one per ID_CHARS_PER_EDIT
    characters); one edit is `id_slip`'s."""
    n = min(len(original), len(written))
    budget = n // ID_CHARS_PER_EDIT
    if n < MIN_NEAR_ID or abs(len(original) - len(written)) > budget or original.lower() == written.lower():
        return False
    if not (is_id(original) and is_id(written)):
        return False
    return edit_distance_within(original.lower(), written.lower(), budget)


def edit_distance_within(a: bytes, b: bytes, k: int) -> bool:
    """Levenshtein distance of `a` and `b` is at most `k` (a band of width 2k + 1 of the usual table)."""
    if abs(len(a) - len(b)) > k:
        return False
    inf = k + 1
    prev = {j: j for j in range(0, min(len(b), k) + 1)}
    for i in range(1, len(a) + 1):
        cur: dict[int, int] = {}
        for j in range(max(0, i - k), min(len(b), i + k) + 1):
            if j == 0:
                cur[j] = i
                continue
            best = prev.get(j - 1, inf) + (a[i - 1] != b[j - 1])
            best = min(best, prev.get(j, inf) + 1, cur.get(j - 1, inf) + 1)
            cur[j] = min(best, inf)
        if min(cur.values(), default=inf) > k:
            return False
        prev = cur
    return prev.get(len(b), inf) <= k


def is_name(tok: bytes) -> bool:
    """An identifier, a path, a dotted or a kebab-case name: `_`, a camel hump, `/`, `.` or two `-`
    (`react-native-reanimated`; one dash is an English compound) (plain words never count)."""
    if len(tok) < MIN_NAME:
        return False
    return b"_" in tok or b"/" in tok or b"." in tok or tok.count(b"-") >= 2 or _HUMP.search(tok) is not None


@dataclass
class NameIndex:
    """Prompt names by (length, which half, half): an edit leaves one half of the name intact."""

    by_half: dict[tuple[int, int, bytes], list[bytes]] = field(default_factory=dict)

    def add(self, tok: bytes) -> None:
        if not is_name(tok):
            return
        h = len(tok) // 2
        for key in ((len(tok), 0, tok[:h]), (len(tok), 1, tok[h:])):
            bucket = self.by_half.setdefault(key, [])
            if tok not in bucket:
                bucket.append(tok)

    def original_of(self, written: bytes) -> bytes | None:
        """The prompt name that `written` is a one-edit slip of, or None."""
        n = len(written)
        for length in (n, n + 1, n - 1):
            h = length // 2
            keys = {(length, 0, written[:h])}
            tail = length - h
            if tail > 0:
                keys.add((length, 1, written[n - tail :]))
            for key in keys:
                for original in self.by_half.get(key, ()):
                    if slip(original, written):
                        return original
        return None


def _edit_position(a: bytes, b: bytes) -> tuple[int, str] | None:
    """(position in `a`, kind) of the single edit turning `a` into `b`, or None when it is not one edit."""
    i = 0
    while i < min(len(a), len(b)) and a[i] == b[i]:
        i += 1
    if len(a) == len(b):
        if a[i + 1 :] == b[i + 1 :]:
            return i, "change"
        if a[i : i + 2] == b[i : i + 2][::-1] and a[i + 2 :] == b[i + 2 :]:
            return i, "swap"
        return None
    if len(a) == len(b) + 1 and a[i + 1 :] == b[i:]:
        return i, "drop"
    if len(b) == len(a) + 1 and a[i:] == b[i + 1 :]:
        return i, "insert"
    return None


def slip(original: bytes, written: bytes) -> bool:
    """One edit inside a word segment of `original` (see the module docstring)."""
    if original == written or original.lower() == written.lower():
        return False
    edit = _edit_position(original, written)
    if edit is None:
        return False
    i, kind = edit
    if kind == "change" and i > 0 and (original[i : i + 1], written[i : i + 1]) in _CONFUSABLE:
        return True  # `getUserById` -> `getUserByld`: a capital I read as a small L, never a new name
    changed = {original[i : i + 2 if kind == "swap" else i + 1], written[i : i + 1]}
    if any(not c.isalpha() for c in changed if c):
        return False  # digits, separators: the digit rules of `identifiers` decide those
    for m in _SEGMENT.finditer(original):
        if m.start() <= i < m.end():
            inner = m.start() < i and (i < m.end() - 1 or kind in ("swap", "insert"))
            return len(m.group()) >= MIN_SEGMENT and inner and (kind != "swap" or i + 1 < m.end())
    return False
