"""`identifier_corruption`: an identifier given in the prompt or a tool result comes back with one character
mutated, e.g. `kimi-k3` -> `kimi-kw`.

Decidable only where the context makes it so. A written identifier counts as corrupted when it is absent from
the conversation so far, while an identifier of the same length, one substitution away, is present, and the
substitution is one a model does not make on purpose:
  - a digit became a letter or a letter a digit (`kimi-k3` -> `kimi-kw`, `django` -> `djang0`), or
  - a letter changed inside a directory of a long path (`django/db/models/query.py` -> `django/db/modals/...`),
    or dropped there, not at either end of the directory's name (`/media/data-mount/` -> `/media/data-ount/`).
Never flagged, because that is how legitimate new identifiers look: digit-to-digit changes (`test_1` ->
`test_2`), case changes, `-`/`_` swaps, a digit appended in place of a last letter (`bounds` -> `bound1`), a
plural (`item1` -> `items`), a version wildcard (`4.2.1` -> `4.2.x`), a changed file name or extension
(`_iomodule.h` -> `_iomodule.o`), and names not one substitution away from a given one. Written
identifiers must contain a digit, `_`, `.`, `-` or `/` (plain words are never checked).

Speed: tool results are the bulk of all text, so they are tokenized in C (`bytes.translate` + `split`) into a
set per trajectory, incrementally, each once (the model's tool arguments join after they were checked); only
identifiers with a digit or a slash (the possible originals) go into a map from (length, half) to identifier,
so a one-substitution neighbour is found with two lookups (a single substitution leaves one half intact).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import islice, repeat

from eval.classify.compiled import speedups as _speedups
from eval.classify.context import Context, History
from eval.classify.glued import known, lexicon
from eval.classify.model import MAX_SPANS, Span, ToolSpec, Turn, span_at
from eval.classify.names import MIN_NEAR_ID, NameIndex, id_near_miss, id_slip, is_id, is_name
from eval.classify.paths import SPACED, extension_slip, split_ext

MIN_LEN = 6
MIN_PATH_LEN = 12
TOKENIZE_MAX = 131072
_KEEP = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-/"
# Every ASCII byte that cannot be part of an identifier becomes a space; UTF-8 multi-byte sequences stay.
_TO_SPACE = bytes(b if (b in _KEEP or b >= 0x80) else 0x20 for b in range(256))
_LETTERS = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
_NOT_DIGITS = bytes(b for b in range(256) if not 0x30 <= b <= 0x39)
_SEPARATORS_TO_SPACE = bytes(0x20 if (0x30 <= b <= 0x39 or b in b"_.-/") else b for b in range(256))
_MARKED_TO_SPACE = bytes(0x20 if (0x30 <= b <= 0x39 or b == 0x2F) else b for b in range(256))


def tokens(text: str) -> set[bytes]:
    """Identifier-like tokens of `text` (as UTF-8 bytes), edge dots and dashes stripped lazily by callers.

    Of a huge text (a 10 MB argument) only the two ends count: identifiers are copied where the model writes.
    """
    if len(text) > 2 * TOKENIZE_MAX:
        text = text[:TOKENIZE_MAX] + " " + text[-TOKENIZE_MAX:]
    if _speedups is not None:  # the same set, built in one pass of C
        return _speedups.identifier_tokens(text)
    return set(text.encode("utf-8", "surrogatepass").translate(_TO_SPACE).split())


@dataclass
class IdentifierIndex:
    known: set[bytes] = field(default_factory=set)
    halves: dict[tuple[int, int, bytes], list[bytes]] = field(default_factory=dict)
    indexed: int = 0  # how many of the history's given chunks are in
    pending: list[set[bytes]] = field(default_factory=list)  # the model's arguments, indexed on the next turn
    names: NameIndex | None = None  # the prompt's names (eval.classify.names), built on first use
    stems: dict[bytes, list[bytes]] = field(default_factory=dict)  # the prompt's file names by stem (paths.py)
    prompt_names: set[bytes] = field(default_factory=set)  # the prompt's names (a `.`, `/` or `_` in them)
    ids: list[bytes] = field(default_factory=list)  # the context's long UUIDs and hashes (`_near_id`)
    ids_at: int = -1  # len(known) when `ids` was listed

    def update(self, history: History) -> None:
        for toks in self.pending:
            self.add(toks)
        self.pending.clear()
        for i in history.given[self.indexed :]:
            self.add(tokens(history.chunks[i]))
        self.indexed = len(history.given)

    def add(self, toks: set[bytes]) -> None:
        if _speedups is not None:  # the same, in one pass of C without the intermediate sets
            _speedups.index_add(toks, self.known, self.halves, MIN_LEN)
            return
        new = toks - self.known
        if not new:
            return
        self.known |= new
        # Tokens with a digit or a slash (the possible originals), found in C: splitting every token at its
        # digits and slashes leaves the others intact, so the tokens not found intact are the marked ones.
        marked = new - set(b" ".join(new).translate(_MARKED_TO_SPACE).split())
        halves = self.halves
        for tok in map(bytes.strip, marked, repeat(b".-")):
            n = len(tok)
            if n >= MIN_LEN:
                self.known.add(tok)
                half = n // 2
                halves.setdefault((n, 0, tok[:half]), []).append(tok)
                halves.setdefault((n, 1, tok[half:]), []).append(tok)

    def _near_id(self, written: bytes) -> bytes | None:
        """A long UUID or hash of the context that `written` copies with a few slips (`names.id_near_miss`). The
        context's IDs are listed when a written ID is first checked and again only when new tokens came in."""
        if len(written) < MIN_NEAR_ID:
            return None
        if self.ids_at != len(self.known):
            self.ids = sorted(t for t in self.known if len(t) >= MIN_NEAR_ID and is_id(t))
            self.ids_at = len(self.known)
        return next((original for original in self.ids if id_near_miss(original, written)), None)

    def original_of(self, written: bytes) -> bytes | None:
        """A context identifier that `written` is a corrupted copy of, or None."""
        n, half = len(written), len(written) // 2
        for key in ((n, 0, written[:half]), (n, 1, written[half:])):
            for original in self.halves.get(key, ()):
                if _corruption(original, written) or id_slip(original, written):
                    return original
        digits = written.translate(None, _NOT_DIGITS)
        if not digits and b"/" not in written:
            return None  # the rest needs a digit (an ID has four, a letter became a digit) or a slash
        if is_id(written):  # a character dropped or doubled in a UUID or hash: the other lengths
            for length in (n + 1, n - 1):
                h, tail = length // 2, length - length // 2
                for key in ((length, 0, written[:h]), (length, 1, written[n - tail :])):
                    for original in self.halves.get(key, ()):
                        if id_slip(original, written):
                            return original
            return self._near_id(written)  # a few slips in a long ID
        elif b"/" in written:  # a letter dropped inside a directory of a long path (`data-mount/` -> `data-ount/`)
            length = n + 1
            h, tail = length // 2, length - length // 2
            for key in ((length, 0, written[:h]), (length, 1, written[n - tail :])):
                for original in self.halves.get(key, ()):
                    if _path_drop(original, written):
                        return original
        # A letter that became a digit (`django` -> `djang0`): the original may have no digit to index by.
        # Checked for a single digit only: the written token must otherwise be all letters and separators.
        if len(digits) == 1:
            i = written.index(digits)
            if _deliberate(written, i, digits.decode()):
                return None
            for letter in _LETTERS:
                original = written[:i] + bytes((letter,)) + written[i + 1 :]
                if original in self.known:
                    return original
        return None


def _corruption(original: bytes, written: bytes) -> bool:
    diffs = [i for i in range(len(original)) if original[i] != written[i]]
    if len(diffs) != 1:
        return False
    i = diffs[0]
    a, b = chr(original[i]), chr(written[i])
    if a.lower() == b.lower() or not (a.isalnum() and b.isalnum()) or not (a.isascii() and b.isascii()):
        return False
    if a.isdigit() != b.isdigit():
        return not _deliberate(written, i, b)
    # A letter change only inside a directory of a long path: a new file beside an old one is legitimate.
    return a.isalpha() and len(original) >= MIN_PATH_LEN and 0 <= i < original.rfind(b"/")


def _path_drop(original: bytes, written: bytes) -> bool:
    """`written` is `original` (a long path) with one letter dropped inside a directory name, neither its first nor
    its last character: `test/` beside `tests/` or `src/` beside `_src/` is how names vary, `data-ount/` is not."""
    if len(original) < MIN_PATH_LEN or len(original) != len(written) + 1:
        return False
    i = 0
    while i < len(written) and original[i] == written[i]:
        i += 1
    if original[i + 1 :] != written[i:] or not original[i : i + 1].isalpha():
        return False
    start = original.rfind(b"/", 0, i) + 1
    end = original.find(b"/", i)
    return end >= 0 and start < i < end - 1


def _deliberate(written: bytes, i: int, new: str) -> bool:
    """Digit/letter changes that are how new names are made: `bound1` beside `bounds`, `items` beside `item1`,
    `4.2.x` beside `4.2.1`."""
    if i == 0:
        return True  # `13-item` -> `n3-item`: a quantity or a new word, not a copied identifier
    if new in "xXnNkK" or not (written[i - 1 : i].isalnum() or written[i + 1 : i + 2].isalnum()):
        return True  # `arg0` -> `argX` (a placeholder), `__a__` -> `__0__` (a one-character key)
    dot = written.rfind(b".")
    stem_end = dot if dot > 0 and written[dot + 1 :].isalpha() else len(written)
    at_end = i == stem_end - 1
    if at_end and (new.isdigit() or new == "s"):
        return True
    return new in "xX" and i > 0 and written[i - 1 : i] == b"."


def detect_identifier_corruption(turn: Turn, ctx: Context) -> list[Span]:
    """Checks content and tool arguments (what reaches answers and actions), not the reasoning.

    The arguments' tokens then join the index: the model's own earlier writes are context for later turns.
    """
    index = ctx.history.identifiers
    if not isinstance(index, IdentifierIndex):
        index = ctx.history.identifiers = IdentifierIndex()
    if index.pending or index.indexed < len(ctx.history.given):
        index.update(ctx.history)
    spans: list[Span] = []
    written_args: list[set[bytes]] = []
    fields = [("content", turn.content)] + [(c.args_field, c.arguments) for c in turn.tool_calls]
    for name, text in fields:
        if len(text) < MIN_LEN:
            continue
        written = tokens(text)
        if name != "content":
            written_args.append(written)
        if index.known:
            spans.extend(_check(name, text, written, index, ctx.history))
        if ctx.history.n_prompt:
            tools = list(ctx.tools.values()) if ctx.tools_known else []
            spans.extend(_check_names(name, text, written, index, ctx.history, tools))
    index.pending.extend(written_args)
    return spans


def _check_names(
    name: str, text: str, written: set[bytes], index: IdentifierIndex, history: History, tools: list[ToolSpec]
) -> list[Span]:
    """Names of the prompt and of the offered tools written with a one-letter slip (eval.classify.names)."""
    if index.names is None:
        index.names = NameIndex()
        for chunk in history.chunks[: history.n_prompt]:
            for tok in tokens(chunk):
                tok = tok.strip(b".-")
                index.names.add(tok)
                if len(tok) >= MIN_LEN and (b"." in tok or b"/" in tok or b"_" in tok):
                    index.prompt_names.add(tok)
                    if (parts := split_ext(tok)) is not None:
                        index.stems.setdefault(parts[0], []).append(parts[1])
        for tool in tools:  # the offered tools' names and parameters are the request's identifiers too
            for tool_name in (tool.name, *tool.properties):
                index.names.add(tool_name.encode("utf-8", "surrogatepass"))
                index.known.add(tool_name.encode("utf-8", "surrogatepass"))
    spans: list[Span] = []
    if index.prompt_names:
        spans.extend(_spaced_names(name, text, index, history))
    if not index.names.by_half and not index.stems:
        return spans
    for tok in written - index.known:
        tok = tok.strip(b".-")
        if tok in index.known:
            continue
        if index.stems and b"." in tok and (split := _spaced_extension(name, text, tok, index, history)):
            spans.extend(split)
            continue
        original = _extension_original(tok, index) if index.stems and b"." in tok else None
        if original is None and is_name(tok) and index.names.by_half:
            original = index.names.original_of(tok)
        if original is None:
            continue
        copy = tok.decode("utf-8", "replace")
        if not history.contains(copy):
            spans.extend(_occurrences(name, text, copy, original.decode()))
    return spans


def _extension_original(tok: bytes, index: IdentifierIndex) -> bytes | None:
    """The prompt's file name that `tok` is with its extension slipped (eval.classify.paths), or None."""
    parts = split_ext(tok, written=True)
    if parts is None:
        return None
    for ext in index.stems.get(parts[0], ()):
        if extension_slip(ext, parts[1]):
            return parts[0] + b"." + ext
    return None


def _spaced_extension(name: str, text: str, tok: bytes, index: IdentifierIndex, history: History) -> list[Span]:
    """A file name of the prompt written with a space inside its extension (`character_creation.ts cn` for
    `character_creation.tscn`, classifier 1.14.0): the written name is the prompt's stem and the first letters of the
    prompt's extension, and the rest of that extension follows after one space, as a token of its own that is no English
    word."""
    parts = split_ext(tok, written=True)
    if parts is None:
        return []
    for ext in index.stems.get(parts[0], ()):
        if len(parts[1]) >= len(ext) or not ext.startswith(parts[1]):
            continue
        rest = ext[len(parts[1]) :].decode("ascii", "replace")
        if known(rest.lower(), lexicon()):
            continue  # `config.js on the page` beside the prompt's `config.json`: a word follows another file
        spaced = f"{tok.decode('utf-8', 'replace')} {rest}"
        at = text.find(spaced)
        after = text[at + len(spaced) : at + len(spaced) + 1]
        if at >= 0 and not (after.isalnum() or after == "_") and not history.contains(spaced):
            why = f"{(parts[0] + b'.' + ext).decode()!r} in context, written with a space in its extension"
            return [span_at(name, text, at, at + len(spaced), why)]
    return []


_SPACED_PAIRS = (". ", "/ ", "_ ", "- ", " .", " /", " _")


def _spaced_names(name: str, text: str, index: IdentifierIndex, history: History) -> list[Span]:
    """A name of the prompt written with a space at a separator (`character_creation. tscn`)."""
    if not any(pair in text for pair in _SPACED_PAIRS):
        return []
    spans: list[Span] = []
    for m in SPACED.finditer(text):
        a, b = (m.group(1), m.group(2)) if m.group(1) is not None else (m.group(3), m.group(4))
        joined = (a + b).encode("utf-8", "surrogatepass").strip(b".-,;:)]}")
        if joined in index.prompt_names and not history.contains(m.group().strip(".-,;:)]}")):
            why = f"{joined.decode()!r} in context, written with a space"
            spans.append(span_at(name, text, m.start(), m.end(), why))
            if len(spans) >= MAX_SPANS:
                break
    return spans


def _check(name: str, text: str, written: set[bytes], index: IdentifierIndex, history: History) -> list[Span]:
    spans: list[Span] = []
    for tok in _written_lookups(written, index):
        original = index.original_of(tok)
        if original is None:
            continue
        copy = tok.decode("utf-8", "replace")
        if not history.contains(copy):  # the token set misses forms glued to punctuation ("kimi-kw.")
            spans.extend(_occurrences(name, text, copy, original.decode()))
    return spans


def _written_lookups(written: set[bytes], index: IdentifierIndex) -> list[bytes]:
    """The tokens of `written` that `_check` looks up: not known, not plain words (a digit or one of `_.-/` in them:
    found in C, as in `add`), as `_looked_up` gives them."""
    if _speedups is not None:  # the sets below and `_looked_up` in one pass of C
        looked: list[bytes] = _speedups.written_lookups(written, index.known, index.halves, MIN_LEN)
        return looked
    unknown = written - index.known
    if not unknown:
        return []
    marked = unknown - set(b" ".join(unknown).translate(_SEPARATORS_TO_SPACE).split())
    return _looked_up(marked, index)


def _looked_up(marked: set[bytes], index: IdentifierIndex) -> list[bytes]:
    """The tokens of `marked`, in order, stripped of edge dots and dashes, that are long enough and not known; the
    compiled helper leaves out those whose `original_of` is None at once (no candidate by half, no digit or slash)."""
    if _speedups is not None:
        looked: list[bytes] = _speedups.unknown_marked(marked, index.known, index.halves, MIN_LEN)
        return looked
    out = []
    for tok in marked:
        tok = tok.strip(b".-")
        if len(tok) >= MIN_LEN and tok not in index.known:
            out.append(tok)
    return out


def _occurrences(name: str, text: str, tok: str, original: str) -> list[Span]:
    pattern = r"(?<![\w.\-/])" + re.escape(tok) + r"(?![\w\-/]|\.\w)"
    why = f"{original!r} in context, written {tok!r}"
    return [span_at(name, text, m.start(), m.end(), why) for m in islice(re.finditer(pattern, text), MAX_SPANS)]
