"""`identifier_corruption`: an identifier given in the prompt or a tool result comes back with one character
mutated, e.g. `kimi-k3` -> `kimi-kw`.

Decidable only where the context makes it so. A written identifier counts as corrupted when it is absent from
the conversation so far, while an identifier of the same length, one substitution away, is present, and the
substitution is one a model does not make on purpose:
  - a digit became a letter or a letter a digit (`kimi-k3` -> `kimi-kw`, `django` -> `djang0`), or
  - a letter changed inside a long file path (`django/db/models/query.py` -> `django/db/modals/query.py`).
Digit-to-digit changes (`test_1` -> `test_2`), case changes, `-`/`_` swaps and new names that are not one
substitution away from a given one are never flagged: those are how legitimate new identifiers look.

The index of the context is built lazily, once per trajectory and incrementally per turn: every context
identifier goes into a set, and those with a digit or a slash into a map from (length, half) to identifier,
so that a one-substitution neighbour is found with two lookups (a single substitution leaves one half intact).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from eval.classify.context import Context, History
from eval.classify.model import Span, Turn, span_at

_TOKEN = re.compile(r"[\w][\w.\-/]{4,}[\w]")
_MARKED = re.compile(r"[\d/]")
MIN_LEN = 6
_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
MIN_PATH_LEN = 12


@dataclass
class IdentifierIndex:
    known: set[str] = field(default_factory=set)
    halves: dict[tuple[int, int, str], list[str]] = field(default_factory=dict)
    indexed_chunks: int = 0

    def update(self, history: History) -> None:
        for chunk in history.chunks[self.indexed_chunks :]:
            new = set(_TOKEN.findall(chunk)) - self.known
            self.known |= new
            for tok in new:
                if _MARKED.search(tok) is not None:
                    half = len(tok) // 2
                    self.halves.setdefault((len(tok), 0, tok[:half]), []).append(tok)
                    self.halves.setdefault((len(tok), 1, tok[half:]), []).append(tok)
        self.indexed_chunks = len(history.chunks)

    def original_of(self, written: str) -> str | None:
        """A context identifier that `written` is a corrupted copy of, or None."""
        n, half = len(written), len(written) // 2
        for key in ((n, 0, written[:half]), (n, 1, written[half:])):
            for original in self.halves.get(key, ()):
                if _corruption(original, written):
                    return original
        # A letter that became a digit (`django` -> `djang0`): the original may have no digit to index by.
        for i, ch in enumerate(written):
            if ch.isdigit():
                for letter in _LETTERS:
                    original = written[:i] + letter + written[i + 1 :]
                    if original in self.known:
                        return original
        return None


def _corruption(original: str, written: str) -> bool:
    diffs = [i for i, (a, b) in enumerate(zip(original, written, strict=True)) if a != b]
    if len(diffs) != 1:
        return False
    a, b = original[diffs[0]], written[diffs[0]]
    if a.isdigit() != b.isdigit():
        return (a.isalpha() or b.isalpha()) and a.lower() != b.lower()
    if a.isalpha() and b.isalpha() and a.lower() != b.lower():
        return "/" in original and len(original) >= MIN_PATH_LEN
    return False


def detect_identifier_corruption(turn: Turn, ctx: Context) -> list[Span]:
    if ctx.history.empty:
        return []
    index = ctx.history.identifiers
    if not isinstance(index, IdentifierIndex):
        index = ctx.history.identifiers = IdentifierIndex()
    spans: list[Span] = []
    for name, text in turn.all_fields():
        if len(text) < MIN_LEN or name.endswith(".name"):
            continue
        written = set(_TOKEN.findall(text))
        if index.indexed_chunks < len(ctx.history.chunks):
            index.update(ctx.history)
        for tok in written - index.known:
            original = index.original_of(tok)
            if original is not None:
                spans.extend(_occurrences(name, text, tok, original))
    return spans


def _occurrences(name: str, text: str, tok: str, original: str) -> list[Span]:
    out = []
    for m in re.finditer(r"(?<![\w.\-/])" + re.escape(tok) + r"(?![\w\-/]|\.\w)", text):
        out.append(span_at(name, text, m.start(), m.end(), f"{original!r} in context, written {tok!r}"))
    return out
