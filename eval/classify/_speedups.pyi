"""Types of the optional compiled helpers (eval/classify/_speedups.c); see the C source for what each computes."""

from collections.abc import Callable, Iterable, Sequence

API: int

def recurring_anchors(
    text: str, anchors: Sequence[int], length: int, back: int, twice: bool = False, /
) -> list[tuple[int, int]]: ...
def last_tokens(
    tail: str,
    line_tokens: Callable[[str], tuple[int, list[str]] | None],
    interjections: frozenset[str],
    token_chars: int,
    window_tokens: int,
    /,
) -> list[str] | None: ...
def window_counts(tokens: list[str], classes: dict[str, str], run: int, /) -> tuple[bool, int, bool]: ...
def spaced_chunks(text: str, min_len: int, /) -> tuple[int, list[str]]: ...
def unknown_marked(
    tokens: Iterable[bytes], known: set[bytes], halves: dict[tuple[int, int, bytes], list[bytes]], min_len: int, /
) -> list[bytes]: ...
def identifier_tokens(text: str, /) -> set[bytes]: ...
