"""Word salad: text made of words (or pieces of words) that no sentence strings together, what a model emits when
its logits are garbage but not collapsed onto one token (no loop to find). Two statistics of a field's prose, each
with a threshold calibrated on real clean text (`python -m eval.classify.calibrate --write`, degeneracy.json:
`mixed_script` and `function_share`), not chosen:

  - `mixed_script`: runs of letters that hold letters of two alphabetic scripts, each with two letters or more
    (`amongсилання`, `семьסכום`, `uninterruptedمصطف`): the pieces of a multilingual vocabulary glued at random.
    Scripts that are written beside Latin without a space on purpose (Han, Kana, Hangul, the Indic scripts: `API를`,
    `PNGसँग`) are not counted, nor a single letter of another script (homoglyphs in a translation, `Gуинеа`).
  - `function_share`: the share of function words (`the`, `of`, `and`, and those of a few other Latin-script
    languages: German, French, Spanish, Italian, Portuguese, Dutch, Indonesian and Malay, the Scandinavian and South
    Slavic languages, Finnish, Estonian, Basque, Welsh) among the words of a field's prose lines (lines of six
    words or more between spaces, two thirds of their tokens plain words: not code, a log or a table).
    Real prose in those languages holds many; real-word salad (`embarked Sol existed trainer Tunisia replacing`)
    holds almost none. Only for fields of MIN_WORDS such words whose letters are all but ASCII (a language this list
    does not cover is mostly written with letters it does not have).

  - `content_run` (1.9.0): the longest run of plain lowercase words none of which is a function word of those
    languages, back to back on one prose line with nothing but a space between them (`walk stroll wander roam drift
    float glide slide…`: a model that strings associated words without any grammar). Real sentences put a
    function word or a punctuation mark every few words; the longest such run in the calibration text is a label
    list in a language the word list lacks.

  - `midsentence_marks` (1.9.0): how many times a word is followed by `!` or `?` and then, after a space, by a
    lowercase word (`Sure!! I! will! check! the! logs!`: a broken model that sprinkles a mark after its
    words). A sentence mark ends a sentence, and the next one starts with a capital; real text does this once
    in a while (`wow! that works`), not after word upon word.

  - `implausible_pairs` (1.11.0, eval/classify/wordpairs.py): how far the adjacent word pairs of the last few lines
    are from those real English writes (`… and like to been and sa p I less millions…`, `your the`, `the and`): a short
    salad of common words and fragments, with no loop and no long run of any one kind of word.

`salad()` uses `mixed_script`, `content_run`, `midsentence_marks`, `implausible_pairs` and (classifier 1.13.0)
`doubled_clitics`, a clitic written twice after a word (`Let's's`; calibrated like the others, threshold 0: no clean
field has one). `function_share` is
calibrated and kept as a measured statistic, but it is off: over the seven held-out parts of replies from public bug
reports it found 1 corrupted reply that nothing else found (in a part it was developed on; 0 in the parts scored
once), while it made classification about 20% slower (114.7 s against 95.2 s of CPU for 6,000 x 50 turns, run
side by side) and raised the false alarms on real multilingual text from 660 to 906 of 26,474 gettext catalog pieces
(Xhosa, Basque, Ganda, Indonesian labels: ASCII languages its word list lacks). Measured 2026-12-05 with
`benchmarks/bench_corpus.py --wild` (with and without it) and `--real-text`, and `benchmarks/bench_classify.py
--fresh-texts`.
"""

from __future__ import annotations

import re
from functools import cache

from eval.classify.bytelevel import in_fence
from eval.classify.charsets import may_hold
from eval.classify.compiled import speedups as _speedups
from eval.classify.degeneracy import FUNCTION_WORDS as ENGLISH_FUNCTION_WORDS
from eval.classify.degeneracy import _prose_line, calibrated
from eval.classify.glued import _blank_code
from eval.classify.tailsalad import tail_pairs
from eval.classify.tailsalad import threshold as tail_pairs_threshold
from eval.classify.wordpairs import implausible_pairs

MIN_WORDS = 20
MIN_LINE_WORDS = 6
MAX_NON_ASCII_LETTERS = 0.02
READS = 8192  # the last characters of a field: salad at the end is what a broken model leaves

# Alphabetic scripts by code point: Latin (with its extensions), Greek, Cyrillic, Armenian, Hebrew, Arabic, Thai,
# Georgian. A switch between two of them inside a word is counted.
_RANGES = (
    (0x0041, 0x024F, 1),
    (0x1E00, 0x1EFF, 1),
    (0x0370, 0x03FF, 2),
    (0x0400, 0x052F, 3),
    (0x0531, 0x058F, 4),
    (0x0590, 0x05FF, 5),
    (0x0600, 0x06FF, 6),
    (0x0E00, 0x0E7F, 7),
    (0x10A0, 0x10FF, 8),
)
_NON_LATIN_ALPHABETIC = re.compile(
    "[\u0370-\u03ff\u0400-\u052f\u0531-\u058f\u0590-\u05ff\u0600-\u06ff\u0e00-\u0e7f\u10a0-\u10ff]"
)
_NON_LATIN_RANGE = (0x370, 0x10FF)  # the code points _NON_LATIN_ALPHABETIC spans (eval.classify.charsets)

_FUNCTION_WORDS_TEXT = """
the of and to a in is it that for on with as was be by this are or at from an not but have has had which you
we they he she his her their its can will would if so there been were all one no do does what when how also
than then these those into about may only our my your them such any some other just should could der die das
und ist nicht ein eine mit von zu den dem des im auf für sich es auch als wird werden wurde bei oder aus wie
wenn sie er ich wir nach noch kann le la les de des du et est un une en pour dans que qui par au aux sur pas
ne plus ce cette il elle sont avec mais ou se son sa ses el los las del y es en un una por con para que se no
al lo como más su sus pero fue ha il di che è e per non con una gli della delle nel sono anche come o os as do
da dos das em um uma para com não que se na no ao mais por het een van en is op te dat niet met voor zijn er
aan ook als bij yang dan di ini itu untuk dengan dari ke tidak ada akan
og i er at av til en et som for med det den ikke har kan om af ett och att inte eller men fra ved
je u na se za da od ne su ili sa kao ako to ki pa v z so tudi ali
ja on ei se tai kun ole ovat oli et ka kui see ning
eta da ez du bat ere edo dira izan ezin baina
y yr o ac yn ei ar mae nid neu
anda boleh atau pada telah
"""
FUNCTION_WORDS = frozenset(_FUNCTION_WORDS_TEXT.split())
# A word between spaces: letters, with quotes or brackets around and sentence punctuation after.
_WORD_TOKENS = re.compile(
    r"(?<!\S)[(\"'\u201c\u2018*]*([A-Za-z\u00c0-\u024f]+(?:'[a-z]+)?)[)\"'\u201d\u2019*.,;:!?]*(?!\S)"
)
_NOT_PROSE_LINE = re.compile(r"[={}|<>]|\(\)")
_CODE = re.compile(
    r"^[ \t]*(```|~~~)[^\n]*\n.*?(?:^[ \t]*\1[^\n]*$|\Z)|`[^`\n]*`|\S*://\S*|^(?: {4}|\t)[^\n]*$", re.S | re.M
)


_LETTER_RUN = re.compile(r"[^\W\d_]{4,}")


def _script(ch: str) -> int:
    o = ord(ch)
    for low, high, script in _RANGES:
        if low <= o <= high:
            return script
    return 0


def mixed_script_words(text: str) -> int:
    """Runs of letters in `text` (no digit, mark or separator between them: `COPY-ის`, `--output=ФАЙЛ` are two
    runs each) that hold two or more letters of each of two alphabetic scripts."""
    if text.isascii() or not may_hold(text, *_NON_LATIN_RANGE) or _NON_LATIN_ALPHABETIC.search(text) is None:
        return 0
    n = 0
    for word in _LETTER_RUN.findall(text):
        if len(word) < 4 or word.isascii() or _NON_LATIN_ALPHABETIC.search(word) is None:
            continue
        counts: dict[int, int] = {}
        for ch in word:
            if script := _script(ch):
                counts[script] = counts.get(script, 0) + 1
        if sum(c >= 2 for c in counts.values()) >= 2:
            n += 1
    return n


def function_share(text: str) -> float | None:
    """The share of function words among the words of `text`'s prose lines; None if there are fewer than MIN_WORDS
    or more than MAX_NON_ASCII_LETTERS of their letters are not ASCII."""
    if "`" in text or "://" in text or "\n    " in text or "\n\t" in text:
        text = _CODE.sub(" ", text)
    words: list[str] = []
    for line in text.split("\n"):
        n = len(line.split())
        if n < MIN_LINE_WORDS or _NOT_PROSE_LINE.search(line) is not None:
            continue
        found = _WORD_TOKENS.findall(line)
        if len(found) >= MIN_LINE_WORDS and 3 * len(found) >= 2 * n:
            words += found
    if len(words) < MIN_WORDS:
        return None
    joined = "".join(words)
    if not joined.isascii():
        non_ascii = len(joined) - len(joined.encode("ascii", "ignore"))
        if non_ascii > MAX_NON_ASCII_LETTERS * len(joined):
            return None
    return sum(map(FUNCTION_WORDS.__contains__, " ".join(words).lower().split())) / len(words)


# Plain lowercase words back to back, one space apart (found in C; only those stretches are then read word by word).
# A backtick, a digit, a mark or a line break ends a stretch. The classifier reads only stretches longer than the
# threshold (a longer run can lie in no other); the calibration reads every stretch of MIN_CONTENT_RUN words.
MIN_CONTENT_RUN = 8
CONTENT_READS = 512  # a chain runs to the end: its last words (the statistics read the tokens of as many characters)
_ALL_FUNCTION_WORDS = FUNCTION_WORDS | ENGLISH_FUNCTION_WORDS
# Bytes that are not a lowercase ASCII letter or a space become a newline: the pieces between are the stretches.
_STRETCH_BYTES = bytes(c if 97 <= c <= 122 or c == 32 else 10 for c in range(256))
_LOWERCASE = bytes(range(97, 123))


_FUNCTION_WORD_BYTES = frozenset(w.encode() for w in _ALL_FUNCTION_WORDS if w.isascii())


def _run_bound(window: str, min_run: int) -> int:
    """At least `content_run`'s value over `window` where that value is `min_run` or more: the longest run of plain
    non-function words in the stretches of `min_run` words or more, without the tests of where a stretch stands.
    The stretches are found on bytes in C; only those are read word by word. Where the compiled helpers are built,
    one pass of C gives the longest run of every stretch: the same value where it is `min_run` or more, and a value
    below `min_run` where this one is (tests/unit/classify/test_fast_paths.py)."""
    if _speedups is not None:
        longest: int = _speedups.plain_run(window, _ALL_FUNCTION_WORDS)
        return longest
    raw = window.encode("utf-8", "surrogatepass")
    # Two spaces end a run (an empty word between them), so they become a line break before the letters are deleted:
    # an indented line's spaces would otherwise stand together like a stretch's.
    if b" " * (min_run - 1) not in raw.replace(b"  ", b"\n").translate(_STRETCH_BYTES, _LOWERCASE):
        return 0  # no stretch of min_run plain words at all: their letters deleted, its spaces would stand together
    stretches = raw.translate(_STRETCH_BYTES).split(b"\n")
    best = 0
    for stretch in stretches:
        if stretch.count(b" ") < min_run - 1:
            continue
        run = 0
        for word in stretch.split(b" "):
            run = run + 1 if word and word not in _FUNCTION_WORD_BYTES else 0
            best = max(best, run)
    return best


@cache
def _plain_stretch(words: int) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w`'\-./])(?:[a-z]+ ){{{words - 1},}}[a-z]+")


def content_run(text: str, min_run: int = MIN_CONTENT_RUN) -> int:
    """The longest run of plain lowercase words that are not function words, one space apart on a prose line, in the
    last CONTENT_READS characters of `text`: not in a fenced block (of `text`) or inline code, not on an indented line
    or a table row; 0 where no stretch of `min_run` plain words holds one of `min_run` or more."""
    start = max(0, len(text) - CONTENT_READS)
    if _run_bound(text[start:], min_run) < min_run:
        return 0  # no run that long even without the line, fence and inline-code tests (most fields stop here)
    best = 0
    for m in _plain_stretch(min_run).finditer(text, start):
        line_start = text.rfind("\n", 0, m.start()) + 1
        line_end = text.find("\n", m.end())
        if text.startswith(("    ", "\t"), line_start) or text.count("|", line_start, line_end) >= 2:
            continue  # an indented line (code, a quote block) or a table row
        if text.count("`", line_start, m.start()) % 2 == 1:
            continue  # inside inline code (`make build test lint …`)
        if in_fence(text, m.start()):
            continue
        run = 0
        for word in m.group().split(" "):
            run = 0 if word in _ALL_FUNCTION_WORDS else run + 1
            best = max(best, run)
    return best if best >= min_run else 0


MARKS_READS = 1024  # a model that sprinkles marks does so to the end: the last characters
_MARK_THEN_WORD = re.compile(r"[!?]+ ([^\W\d_])")


def midsentence_marks(text: str, limit: float = -1.0) -> int:
    """The most `!` or `?` runs on one prose line of the last MARKS_READS characters (eval/classify/degeneracy.py's
    prose test: not code, a log or a table, where the marks are operators and pattern syntax; not in a fenced block)
    that follow a word of two letters or more and are followed by a space and a lowercase word of the same alphabet
    (not a label's `!` before a name in another script). With `limit`, lines with at most `limit` such marks are not
    read (a value <= `limit` is returned for a text without a line beyond it)."""
    start = max(0, len(text) - MARKS_READS)
    if text.find("! ", start) < 0 and text.find("? ", start) < 0:
        return 0
    per_line: dict[int, int] = {}
    for m in _MARK_THEN_WORD.finditer(text, start):
        before = text[m.start() - 2 : m.start()]
        after = m.group(1)
        if after.islower() and len(before) == 2 and before.isalpha() and _script(before[1]) == _script(after) != 0:
            line_start = text.rfind("\n", 0, m.start()) + 1
            per_line[line_start] = per_line.get(line_start, 0) + 1
    best = 0
    for line_start, count in per_line.items():
        if count <= max(limit, best):
            continue
        line_end = text.find("\n", line_start)
        line = text[line_start : len(text) if line_end < 0 else line_end]
        if not in_fence(text, line_start) and _prose_line(line) is not None:
            best = count
    return best


# A clitic written twice after a word (`Let's's`, `don't't`, `we’re’re`): the sampler emitted the clitic's token
# again, a stutter below the word level that `stutter` (whole words) does not see. Code and URLs are blanked.
_CLITIC_TWICE = re.compile("(?<=[^\\W\\d_])(['\u2019][a-z]{1,2})\\1(?![^\\W\\d_])")
# The same without the look-behind: it starts at the apostrophe, which the regex engine scans for, so a field without
# a doubled clitic costs one scan (about every English field holds an apostrophe, few a doubled clitic).
_CLITIC_TWICE_QUICK = re.compile("(['\u2019][a-z]{1,2})\\1(?![^\\W\\d_])")


def _may_double_a_clitic(text: str) -> bool:
    """Whether an apostrophe stands 2 or 3 characters after the same apostrophe (`'s's`, `'ll'll`), as a clitic
    written twice needs: a few `find`s where the regex would read every character of the field."""
    for mark in ("'", "\u2019"):
        i = text.find(mark)
        while i >= 0:
            if text.startswith(mark, i + 2) or text.startswith(mark, i + 3):
                return True
            i = text.find(mark, i + 1)
    return False


def doubled_clitics(text: str) -> int:
    """How many different clitics (with the word's last letter) a field writes twice in a row (`Let's's`)."""
    if not _may_double_a_clitic(text) or _CLITIC_TWICE_QUICK.search(text) is None:
        return 0
    return len({text[m.start() - 1 : m.end()] for m in _CLITIC_TWICE.finditer(_blank_code(text))})


@cache
def thresholds() -> dict[str, float]:
    """The calibrated thresholds (degeneracy.json): more than `mixed_script` such words, a `content_run` longer than
    its threshold, more `midsentence_marks`, or a `function_share` below its threshold, is salad. Missing entries
    never fire."""
    return {
        "doubled_clitics": calibrated("doubled_clitics", float("inf")),
        "mixed_script": calibrated("mixed_script", float("inf")),
        "function_share": calibrated("function_share", -1.0),
        "content_run": calibrated("content_run", float("inf")),
        "midsentence_marks": calibrated("midsentence_marks", float("inf")),
        "implausible_pairs": calibrated("implausible_pairs", float("-inf")),
    }


def salad(text: str) -> str | None:
    """Why the end of `text` is word salad, or None."""
    tail = text[-READS:]
    limits = thresholds()
    mixed = mixed_script_words(tail)
    if mixed > limits["mixed_script"]:
        return f"word salad: {mixed} words mix two alphabets (beyond {limits['mixed_script']:.3g})"
    longer = int(limits["content_run"]) + 1  # a run of that many words needs as many spaces
    if (run := content_run(tail, longer)) > limits["content_run"]:
        return f"word salad: {run} words in a row without a function word (beyond {limits['content_run']:.3g})"
    if (marks := midsentence_marks(tail, limits["midsentence_marks"])) > limits["midsentence_marks"]:
        why = f"word salad: {marks} marks in mid-sentence (beyond {limits['midsentence_marks']:.3g})"
        return why
    if (pairs := implausible_pairs(tail)) < limits["implausible_pairs"]:
        why = f"word salad: word pairs English does not write ({pairs:.3g}, below {limits['implausible_pairs']:.3g})"
        return why
    if (pairs := tail_pairs(tail)) < (limit := tail_pairs_threshold()):
        return f"word salad at the end: word pairs English does not write ({pairs:.3g}, below {limit:.3g})"
    if (clitics := doubled_clitics(tail)) > limits["doubled_clitics"]:
        return f"stutter: {clitics} clitics written twice (`Let's's`; beyond {limits['doubled_clitics']:.3g})"
    return None  # function_share is measured but off (module docstring)
