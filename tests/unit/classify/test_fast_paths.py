"""The classifier's fast paths (issue 30, speed) give exactly what the plain computations give."""

from __future__ import annotations

import random
import re
from itertools import repeat
from operator import eq
from pydoc_data.topics import topics
from typing import Any

import pytest

import eval.classify.bytelevel as bytelevel_module
import eval.classify.charsets as charsets_module
import eval.classify.codepages as codepages_module
import eval.classify.degeneracy as degeneracy_module
import eval.classify.glued as glued_module
import eval.classify.identifiers as identifiers_module
import eval.classify.neardup as neardup_module
import eval.classify.repetition as repetition_module
import eval.classify.salad as salad_module
import eval.classify.spacing as spacing_module
import eval.classify.splitwords as splitwords_module
import eval.classify.tailsalad as tailsalad_module
import eval.classify.textual as textual_module
import eval.classify.wordpairs as wordpairs_module
from eval.classify.bytelevel import _NON_ASCII_WORD, SUSPECT, SUSPECT_RANGE, non_ascii_words
from eval.classify.charsets import may_hold
from eval.classify.degeneracy import (
    _CJK,
    _CJK_RANGE,
    _CODE_HINT,
    _PERIODIC,
    _TOKEN_CLASS,
    _WORD,
    FUNCTION_WORDS,
    INTERJECTIONS,
    MAX_UNIT_TOKENS,
    MIN_REPS,
    TAIL_CHARS,
    TOKEN_CHARS,
    WINDOW_TOKENS,
    _code_hint,
    _last_tokens,
    _last_tokens_python,
    _line_tokens,
    _may_repeat,
    _periodicity,
    _unfenced,
    _window_tokens,
    degenerate,
    mostly_words,
    prose,
    prose_degenerate,
    statistics,
)
from eval.classify.formats import FORMATS, any_marker, any_marker_in, call_text_pattern, call_text_pattern_in
from eval.classify.glued import (
    _RUN,
    _SUSPECT,
    COMPOUND_HEADS,
    COMPOUND_TAILS,
    MAX_RUN,
    MIN_RUN,
    READS,
    _blank_code,
    _glued_candidates_python,
    _runs,
    glue_points,
    glued_runs,
    known,
    lexicon,
)
from eval.classify.identifiers import _TO_SPACE, IdentifierIndex
from eval.classify.names import is_id
from eval.classify.neardup import KEY_CHARS, near_duplicates
from eval.classify.neardup import READS as NEAR_READS
from eval.classify.repetition import (
    ANCHOR,
    FREE_TEXT,
    MAX_PERIOD,
    SHORT,
    SHORT_ANCHOR,
    SHORT_MAX_PERIOD,
    SHORT_SPACING,
    SHORT_TAIL,
    SPACING,
    THRESHOLDS,
    Region,
    ShortThresholds,
    Thresholds,
    _degenerate,
    _region_at,
    _short_degenerate,
    _short_region_tail,
    worst_region,
)
from eval.classify.salad import _NON_LATIN_ALPHABETIC, _NON_LATIN_RANGE, CONTENT_READS
from eval.classify.spacing import _CODE, LONG_CHUNK, _chunks_of, _long_chunks, code_to_newlines, strip_code
from eval.classify.special import _FAST, _may_hold_token
from eval.classify.splitwords import (
    _GAP,
    _PIECE,
    _SPACED_MARK,
    _TOKEN,
    MIN_SPELLED,
    spaced_gaps,
    spaced_letters,
    split_pieces,
    wide_lexicon,
)
from eval.classify.splitwords import READS as SPLIT_READS
from eval.classify.splitwords import _blank_code as _split_blank
from eval.classify.splitwords import _prose as _split_prose
from eval.classify.splitwords import _word as _split_word
from eval.classify.tailsalad import tail_pairs
from eval.classify.textual import _SURROGATE, _has_surrogate
from eval.classify.wordpairs import MAX_WORDS as MAX_PAIR_WORDS
from eval.classify.wordpairs import implausible_pairs

REFERENCE = "\n".join(topics[k] for k in sorted(topics))


def _texts() -> list[str]:
    """Real prose in pieces, and every kind of degenerate text the statistics find, mixed into prose."""
    rng = random.Random(30)
    function_words = sorted(FUNCTION_WORDS)
    out = []
    for _ in range(1000):
        start = rng.randrange(len(REFERENCE) - 6000)
        piece = REFERENCE[start : start + rng.choice((20, 60, 200, 600, 1500, 5000))]
        kind = rng.randrange(8)
        if kind == 1:  # token salad of function words
            piece += " " + " ".join(rng.choice(function_words) for _ in range(rng.randint(3, 14)))
        elif kind == 2:  # a unit of 1-8 tokens repeated 2-5 times
            words = ("is", "the", "ok,", "a", "value", "哈", "0", "ha")
            unit = " ".join(rng.choice(words) for _ in range(rng.randint(1, 8)))
            piece += " " + " ".join([unit] * rng.randint(2, 5)) + rng.choice(("", ".", " and then it stops."))
        elif kind == 3:  # a paragraph repeated
            piece = piece[-300:] * rng.randint(2, 4)
        elif kind == 4:  # CJK, interjections and commas
            piece += " 我们 先 看 看 这个 问题 ha ha , , the , of , and , to , in , a , is"
        elif kind == 5:  # very short
            piece = piece[: rng.randint(0, 30)]
        out.append(piece)
    return out


def test_prose_degenerate_is_the_verdict_of_the_statistics() -> None:
    texts = _texts()
    verdicts = [prose_degenerate(t) for t in texts]
    assert verdicts == [bool(degenerate(statistics(t, compression=False))) for t in texts]
    assert 50 < sum(verdicts) < len(texts) - 50  # both verdicts are well represented
    long = REFERENCE[:20000] + " of the and to " * 5
    assert prose_degenerate(long) is bool(degenerate(statistics(long[-4 * TAIL_CHARS :], compression=False)))


def test_the_last_tokens_read_from_the_end_are_the_window_tokens() -> None:
    texts = _texts() + ["Σ word ΣΑΣ end.\nthe\tindented\n    code here\nand then ΑΣ, the end of it all."] * 3
    shortcut = 0
    for t in texts:
        tokens = _last_tokens(t)
        if tokens is not None:
            shortcut += 1
            assert tokens == _window_tokens(prose(t[-4 * TAIL_CHARS :], TOKEN_CHARS))
    assert shortcut > len(texts) // 2


def test_long_chunks_are_the_regex_chunks() -> None:
    pattern = re.compile(r"[^ \n\t\r]{24,}")
    rng = random.Random(1)
    alphabet = list("ab \n\t\r\xa0\x0b\x0c\u2028é")
    for _ in range(5000):
        text = "".join(rng.choice(alphabet) if rng.random() < 0.2 else "a" for _ in range(rng.randint(0, 120)))
        assert _long_chunks(text) == pattern.findall(text)


def test_long_chunks_from_str_split_are_the_long_chunks() -> None:
    rng = random.Random(5)
    alphabet = list("ab \n\t\r\xa0\x0b\x0c\u2028é")
    for _ in range(5000):
        text = "".join(rng.choice(alphabet) if rng.random() < 0.2 else "a" for _ in range(rng.randint(0, 120)))
        non_space = len(text) - sum(text.count(c) for c in " \n\t\r")
        assert _chunks_of(text, non_space) == _long_chunks(text)


def test_near_duplicates_with_a_limit_decide_as_the_full_count() -> None:
    rng = random.Random(6)
    sentences = [REFERENCE[i : i + rng.randint(60, 200)] for i in range(0, 400_000, 4001)]
    texts = []
    for _ in range(1500):
        unit = " ".join(rng.sample(sentences, rng.randint(1, 3)))
        words = unit.split()
        reps = []
        for _ in range(rng.randint(1, 6)):
            copy = list(words)
            if copy and rng.random() < 0.7:
                copy[rng.randrange(len(copy))] = rng.choice(["parser", "loader", "x", "the"])
            reps.append(" ".join(copy))
        texts.append(rng.choice(sentences) + ". " + ". ".join(reps) + rng.choice(["", ".", "\n\n"]))
    counts = [near_duplicates(t) for t in texts]
    assert len(set(counts)) >= 4  # repeats of every count are represented
    for limit in (1.0, 2.0, 3.0):
        assert [near_duplicates(t, limit) > limit for t in texts] == [c > limit for c in counts]


def test_non_ascii_words_are_the_words_with_a_non_ascii_character() -> None:
    rng = random.Random(2)
    alphabet = list("ab c\n\t\xa0\u3000é©Ġ.-")
    for _ in range(5000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        words = [(m.start(), m.end()) for m in re.finditer(r"\S+", text) if not m.group().isascii()]
        assert [(m.start(), m.end()) for m in _NON_ASCII_WORD.finditer(text)] == words


def test_non_ascii_words_from_their_characters_are_the_regex_words() -> None:
    rng = random.Random(3)
    alphabet = list("ab c\n\t\xa0\u3000\u2028\x85é©Ġ.-")
    for _ in range(5000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        assert list(non_ascii_words(text)) == [(m.start(), m.end()) for m in _NON_ASCII_WORD.finditer(text)]


def test_code_stripping_without_impossible_alternatives_is_the_full_pattern() -> None:
    rng = random.Random(4)
    alphabet = list("ab `~:/ \n\t\r\xa0")
    texts = [REFERENCE[i : i + 700] for i in range(0, 200_000, 997)]
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 60))) for _ in range(5000)]
    for text in texts:
        assert strip_code(text) == _CODE.sub(" ", text)


def test_code_hint_in_two_searches_is_the_alternation() -> None:
    rng = random.Random(5)
    alphabet = list("ab 0:.-*+ \t\xa0é٣_(")
    lines = REFERENCE.split("\n")[:20000]
    lines += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30))) for _ in range(5000)]
    assert any(_code_hint(line) for line in lines) and not all(_code_hint(line) for line in lines)
    for line in lines:
        assert _code_hint(line) is (_CODE_HINT.search(line) is not None)


def test_mostly_words_is_the_word_regex_count() -> None:
    rng = random.Random(36)
    alphabet = "ab Z1_-'’.,;:!?\"()[]*«»“”‘「」。、，！？：；…\t\u00a0é\u00b2ǅ\u0660/="
    lines = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40))) for _ in range(20000)]
    lines += REFERENCE[:200000].split("\n")
    for line in lines:
        assert mostly_words(line, line.split()) is (3 * len(_WORD.findall(line)) > 2 * len(line.split())), line


def _plain_worst_region(text: str, truncated: bool, t: Thresholds) -> Region | None:
    """`worst_region` before the span precheck: every recurring anchor's region grown and judged."""
    n = len(text)
    anchors = [n, n - 16, n - 48, *range(ANCHOR + SPACING, n - 48, SPACING)]
    for a in anchors:
        if a <= ANCHOR:
            continue
        j = text.rfind(text[a - ANCHOR : a], max(0, a - ANCHOR - MAX_PERIOD), a - 1)
        if j >= 0 and _degenerate(text, region := _region_at(text, a, a - ANCHOR - j), truncated, t):
            return region
    return None


def _plain_short_region(text: str, t: ShortThresholds = SHORT) -> Region | None:
    """`_short_region_tail` as one loop over the anchors."""
    n, skip_to = len(text), 0
    for a in (*range(SHORT_ANCHOR + SHORT_SPACING, n, SHORT_SPACING), n):
        if a < skip_to:
            continue
        lo = a - SHORT_ANCHOR - SHORT_MAX_PERIOD
        seg = text[a - SHORT_ANCHOR : a]
        j = text.rfind(seg, lo if lo > 0 else 0, a - 1)
        if j < 0:
            continue
        p = a - SHORT_ANCHOR - j
        if j >= p and text[j - p : j - p + SHORT_ANCHOR] == seg and not seg.isspace():
            region = _region_at(text, a, p)
            if _short_degenerate(text, region, t):
                return region
            skip_to = region.end
    return None


def _looping_texts(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        unit = "".join(rng.choice("ab c\n|x=é") for _ in range(rng.randint(1, 120)))
        text = "".join(rng.choice("abcdef ghij\n") for _ in range(rng.randint(0, 600))) + unit * rng.randint(0, 40)
        if rng.random() < 0.5:
            text += "".join(rng.choice("ab c") for _ in range(rng.randint(0, 80)))
        out.append(text)
    start = rng.randrange(len(REFERENCE) - 5000)
    out += [REFERENCE[start + i * 700 : start + i * 700 + 2000] for i in range(300)]
    return out + ["x" * k for k in range(100)] + ["ab" * k for k in range(60)]


def test_worst_region_with_the_span_precheck_is_the_plain_search() -> None:
    texts = _looping_texts(37, 5000)
    found = 0
    for text in texts:
        for truncated in (False, True):
            for t in (THRESHOLDS, FREE_TEXT):
                region = worst_region(text, truncated, t)
                assert region == _plain_worst_region(text, truncated, t)
                found += region is not None
    assert 1000 < found < 4 * len(texts) - 1000


def test_short_region_with_the_look_backs_first_is_the_plain_loop() -> None:
    texts = [text[-SHORT_TAIL:] for text in _looping_texts(38, 5000)]
    regions = [_short_region_tail.__wrapped__(text, SHORT) for text in texts]
    assert regions == [_plain_short_region(text) for text in texts]
    assert 500 < sum(r is not None for r in regions) < len(texts) - 500


def test_the_surrogate_check_is_the_surrogate_search() -> None:
    rng = random.Random(39)
    alphabet = ["a", " ", "é", "’", "\U0001f600", "\ud800", "\udfff", "\udc80", "中"]
    for _ in range(5000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        assert _has_surrogate(text) is (_SURROGATE.search(text) is not None)


def test_an_identifier_without_digit_or_slash_has_only_same_length_originals() -> None:
    """`IdentifierIndex.original_of` leaves such a token after the same-length lookups: the other branches need an
    ID (four digits at least), a slash or exactly one digit."""
    rng = random.Random(40)
    for _ in range(20000):
        tok = "".join(rng.choice("abcdefABCDEF-_.xyz") for _ in range(rng.randint(6, 40))).encode()
        assert not is_id(tok)
    index = IdentifierIndex()
    index.add({b"django/db/models/query.py", b"kimi-k3", b"abc_def", b"0123456789abcdef0123"})
    assert index.original_of(b"django/db/modals/query.py") == b"django/db/models/query.py"
    assert index.original_of(b"kimi-kw") == b"kimi-k3"
    assert index.original_of(b"abc_dfe") is None


def test_the_repeat_precheck_is_whether_the_periodicity_regex_matches() -> None:
    rng = random.Random(41)
    for _ in range(20000):
        alphabet = bytes(range(rng.randint(1, 12)))
        seq = bytes(rng.choice(alphabet) for _ in range(rng.randint(0, 64)))
        assert _may_repeat(seq) is (_PERIODIC.search(seq) is not None), seq


def _plain_periodicity(tokens: list[str]) -> float:
    ids = {t: i for i, t in enumerate(dict.fromkeys(tokens))}
    seq = bytes(map(ids.__getitem__, tokens))
    letters = [any(c.isalpha() for c in t) for t in ids]
    best = 1.0
    for m in _PERIODIC.finditer(seq):
        reps = (m.end() - m.start()) // len(m.group(1))
        if reps > best and any(letters[b] for b in m.group(1)):
            best = float(reps)
    return best


def test_periodicity_is_the_plain_search() -> None:
    rng = random.Random(42)
    words = ["is", "the", ",", "0", "1", "a", "ok", "--", "哈", "x"]
    for _ in range(20000):
        tokens = [rng.choice(words[: rng.randint(1, len(words))]) for _ in range(rng.randint(0, 64))]
        assert _periodicity(tokens) == _plain_periodicity(tokens), tokens
    for text in _texts():
        tokens = _window_tokens(prose(text[-4 * TAIL_CHARS :], TOKEN_CHARS))
        assert _periodicity(tokens) == _plain_periodicity(tokens)


_MARKUP_PIECES = (
    "<tool_call>",
    "</tool_call>",
    "<function=bash>",
    "<parameter=command>",
    "</parameter>",
    "</function>",
    "<|call|>",
    "<|channel|>",
    "to=functions.bash",
    "xto=functions.x",
    "assistantfinal",
    "Assistantanalysis",
    "[TOOL_CALLS]",
    "[ARGS]",
    "[CALL_ID]",
    "<｜tool▁calls▁begin｜>",
    "<|python_tag|>",
    '<invoke name="bash">',
    "<arg_key>",
    "<|tool_call>",
    "<tool_call|>",
    "<function",
    '{"name": "bash", "arguments":',
    "[bash(command=",
    "[submit()]",
    "<",
    "[",
    "a",
    "t",
    "to",
    "assistant",
    " ",
    "\n",
    "word",
    "{",
    '"name"',
    "(",
    ")",
    "|",
)


def _markup_texts(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(_MARKUP_PIECES) for _ in range(rng.randint(0, 12))) for _ in range(count)]


def test_any_marker_without_the_absent_needles_is_the_full_alternation() -> None:
    texts = _markup_texts(43, 4000)
    start = random.Random(43).randrange(len(REFERENCE) - 100000)
    texts += REFERENCE[start : start + 100000].split("\n\n")
    for fmt in (*FORMATS, "unknown"):
        full = any_marker(fmt)
        hits = [any_marker_in(fmt, text) for text in texts]
        assert hits == [full.search(text) is not None for text in texts], fmt
        assert 100 < sum(hits) < len(texts) - 100


def test_call_pattern_of_the_present_shape_finds_the_same_calls() -> None:
    for tools in ((), ("bash",), ("bash", "submit")):
        full = call_text_pattern(tools)
        for text in _markup_texts(44, 4000):
            one = call_text_pattern_in(tools, text)
            expected = [] if full is None or ('"name"' not in text and "[" not in text) else full.finditer(text)
            assert [m.span() for m in (one.finditer(text) if one is not None else [])] == [m.span() for m in expected]


def test_the_split_special_token_search_is_the_alternation() -> None:
    rng = random.Random(45)
    pieces = (
        "<|im_end|>",
        "<｜end｜>",
        "<start_of_turn>",
        "_of_turn>",
        "<pad>",
        "[PAD]",
        "[UNK]",
        "</s>",
        "<s><s>",
        "[INST]",
        "[/INST]",
        "<<SYS>>",
        "[gMASK]",
        "<reserved_12>",
        "<_user>",
        "]~!b[",
        "]~b]",
        "[e~[",
        "<seed:bos>",
        "<extra_id_1>",
        "<fim_middle>",
        "[control_11]",
        "<",
        "[",
        "]",
        "_",
        "~",
        "b",
        "!",
        "s>",
        " ",
        "word",
        "|",
    )
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 10))) for _ in range(20000)]
    texts += REFERENCE[:100000].split("\n\n")
    hits = [_may_hold_token(text) for text in texts]
    assert hits == [_FAST.search(text) is not None for text in texts]
    assert 1000 < sum(hits) < len(texts) - 1000


def test_the_lead_byte_prefilter_never_hides_a_character_of_its_block() -> None:
    blocks = ((SUSPECT_RANGE, SUSPECT), (_CJK_RANGE, _CJK), (_NON_LATIN_RANGE, _NON_LATIN_ALPHABETIC))
    for (low, high), pattern in blocks:
        for code in range(0x80, 0x110000):
            if low <= code <= high:
                assert may_hold("a" + chr(code) + "b", low, high), hex(code)
            elif pattern.search(chr(code)) is not None:
                raise AssertionError(f"{pattern.pattern} matches {code:#x} outside {low:#x}-{high:#x}")
        assert not may_hold("plain ASCII", low, high)
        assert not may_hold("curly ’quotes’ … and — dashes", low, high) or low <= 0x2019 <= high
    rng = random.Random(46)
    for _ in range(20000):
        text = "".join(
            chr(rng.choice((rng.randrange(0x80), rng.randrange(0x80, 0x3000), rng.randrange(0x110000))))
            for _ in range(rng.randint(0, 8))
        )
        for (low, high), pattern in blocks:
            if pattern.search(text) is not None:
                assert may_hold(text, low, high)


# The optional compiled helpers (eval/classify/_speedups.c, built by setup.py where a C compiler is): each gives what
# the pure-Python path gives, on real prose, random ASCII and Unicode, and adversarial texts. Without the build the
# pure-Python paths alone run (the comparisons are skipped, the whole-classifier test still runs).
_SPEEDUP_MODULES = (
    bytelevel_module,
    charsets_module,
    codepages_module,
    degeneracy_module,
    glued_module,
    repetition_module,
    identifiers_module,
    neardup_module,
    spacing_module,
    splitwords_module,
    textual_module,
    salad_module,
    tailsalad_module,
    wordpairs_module,
)
_ALPHABET = [
    *"abcXYZ019 _-'\"()[]*.,;:!?|/\\=<>@#$%&~^+`\t\n\x0b\x0c\r\x1c\x1f",
    *"é’“İßΣ²\u3000\u00a0\u2028ｗ\U0001f600\ud800哈",
]
_WORDS = ["ha", "hehe", "lol", "w", "ｗ", "xd", "the", "of", "and", "Ha", "HAHA", "foo_bar", "x1", "\n", "    x y z"]


def _random_texts(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        kind = rng.random()
        start = rng.randrange(len(REFERENCE) - 6000)
        if kind < 0.3:
            text = REFERENCE[start : start + rng.randrange(0, 6000)]
        elif kind < 0.55:
            text = "".join(rng.choice(_ALPHABET) for _ in range(rng.randrange(0, 400)))
        elif kind < 0.75:
            text = " ".join(rng.choice([*_WORDS, "a b c", "the | x |", ", ,"]) for _ in range(rng.randrange(0, 300)))
        elif kind < 0.85:
            unit = "".join(rng.choice(_ALPHABET) for _ in range(rng.randint(1, 40)))
            text = REFERENCE[start : start + rng.randrange(0, 500)] + unit * rng.randint(2, 60)
        else:
            chars = list(REFERENCE[start : start + rng.randrange(0, 3000)])
            for _ in range(rng.randrange(0, 20)):
                if chars:
                    chars[rng.randrange(len(chars))] = rng.choice(_ALPHABET)
            text = "".join(chars)
        out.append(text)
    return out


def _compiled() -> Any:
    if degeneracy_module._speedups is None:
        pytest.skip("the compiled helpers are not built here (setup.py build_ext --inplace)")
    return degeneracy_module._speedups


def test_compiled_last_tokens_are_the_python_loops() -> None:
    compiled = _compiled()
    for text in _random_texts(61, 6000) + _texts():
        tail = text[-4 * TAIL_CHARS :]
        if _CJK.search(tail) is not None:
            continue
        fast = compiled.last_tokens(_unfenced(tail), _line_tokens, INTERJECTIONS, TOKEN_CHARS, WINDOW_TOKENS)
        assert fast == _last_tokens_python(tail), text[-300:]


def test_compiled_recurring_anchors_are_the_rfind_loops() -> None:
    compiled = _compiled()
    for text in _random_texts(62, 3000):
        n = len(text)
        for length, back in ((ANCHOR, ANCHOR + MAX_PERIOD), (SHORT_ANCHOR, SHORT_ANCHOR + SHORT_MAX_PERIOD), (3, 7)):
            anchors = [n, n - 16, n - 48, *range(length, n, 5)]
            plain = []
            for a in anchors:
                if a <= length:
                    continue
                j = text.rfind(text[a - length : a], max(0, a - back), a - 1)
                if j >= 0:
                    plain.append((a, j))
            assert compiled.recurring_anchors(text, anchors, length, back) == plain
            twice = [
                (a, j)
                for a, j in plain
                if j >= (p := a - length - j)
                and text[j - p : j - p + length] == text[a - length : a]
                and not text[a - length : a].isspace()
            ]
            assert compiled.recurring_anchors(text, anchors, length, back, True) == twice


def test_compiled_window_counts_are_the_python_counts() -> None:
    compiled = _compiled()
    assert set(_TOKEN_CLASS.values()) <= {"f", ""}
    rng = random.Random(63)
    vocabulary = [*sorted(FUNCTION_WORDS)[:12], ",", "x", "y", "é", "哈", "0", "", "the"]
    windows = [_window_tokens(t) for t in _random_texts(64, 1500)]
    windows += [[rng.choice(vocabulary) for _ in range(rng.randint(0, 64))] for _ in range(3000)]
    for tokens in windows:
        for run in (1, 2, 3, 9):
            classes = "".join(map(_TOKEN_CLASS.get, tokens, repeat("o")))
            distinct = len(set(zip(tokens, tokens[1:], tokens[2:], strict=False)))
            plain = ("f" * run in classes, distinct, any(map(eq, tokens, tokens[1:])))
            assert compiled.window_counts(tokens, _TOKEN_CLASS, run) == plain, tokens


def test_compiled_spaced_chunks_are_the_split_chunks() -> None:
    compiled = _compiled()
    pattern = re.compile(r"[^ \n\t\r]{24,}")
    rng = random.Random(65)
    alphabet = list("ab \n\t\r\xa0\x0b\x0c\u2028é\U0001f600")
    texts = _random_texts(66, 2000)
    texts += ["".join(rng.choice(alphabet) if rng.random() < 0.2 else "a" for _ in range(200)) for _ in range(3000)]
    for text in texts:
        total = len(text) - text.count(" ") - text.count("\n") - text.count("\t") - text.count("\r")
        assert compiled.spaced_chunks(text, LONG_CHUNK) == (total, pattern.findall(text))
        if total >= 80:
            assert pattern.findall(text) == _chunks_of(text, total)


def test_compiled_identifier_lookups_leave_out_only_tokens_without_an_original() -> None:
    compiled = _compiled()
    rng = random.Random(67)
    pieces = ["src", "pkg", "module_1", "django", "db", "models", "query.py", "a3f9c2d1", "kimi-k3", "v1.2", "-", "."]
    index = IdentifierIndex()
    for _ in range(300):
        index.add({"/".join(rng.choice(pieces) for _ in range(rng.randint(1, 4))).encode() for _ in range(20)})
    for _ in range(3000):
        written = {
            "".join(rng.choice([*pieces, "/", "0", "q", ".", "-", "é"]) for _ in range(rng.randint(1, 6))).encode()
            for _ in range(rng.randint(0, 30))
        }
        plain = []
        for tok in written:
            tok = tok.strip(b".-")
            if len(tok) >= 6 and tok not in index.known:
                plain.append(tok)
        fast = compiled.unknown_marked(written, index.known, index.halves, 6)
        assert fast == [t for t in plain if t in fast]  # the same order
        assert all(index.original_of(t) is None for t in plain if t not in fast)


@pytest.mark.parametrize("seed", [0, 1])
def test_the_labels_are_the_same_with_and_without_the_compiled_helpers(seed: int, monkeypatch: Any) -> None:
    import json

    from benchmarks.bench_classify import Generator
    from eval.classify import Context, classify_trajectory
    from eval.classify.repetition import clear_text_caches

    gen = Generator(seed, pool=60)
    rng = random.Random(seed)
    trajectories = [gen.trajectory(12)[0] for _ in range(40)]
    for records in trajectories[::3]:  # random, unicode and adversarial text in every field
        for record in records:
            record["content"] = rng.choice(_random_texts(rng.randrange(10**6), 1)) * rng.choice((1, 1, 3))
            record["reasoning_content"] = rng.choice(_texts())

    def labels() -> list[str]:
        clear_text_caches()
        return [
            json.dumps(classify_trajectory(r, Context.build("qwen3_coder")).to_json(), sort_keys=True)
            for r in trajectories
        ]

    compiled = labels()
    for module in _SPEEDUP_MODULES:
        monkeypatch.setattr(module, "_speedups", None)
    assert labels() == compiled


def test_compiled_identifier_tokens_are_the_byte_tokens_in_the_same_order() -> None:
    compiled = _compiled()
    rng = random.Random(68)
    alphabet = [*_ALPHABET, "\udfff", "\U0010ffff", "\x7f", "\x80", "ÿ", "Ā"]
    texts = _random_texts(69, 3000)
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 600))) for _ in range(3000)]
    texts += ["x" * 1000 + "/é" * 300, "", " ".join(f"t_{i}" for i in range(20000)) * 2, "ab/1 " * 5000]
    for text in texts:
        plain = set(text.encode("utf-8", "surrogatepass").translate(_TO_SPACE).split())
        fast = compiled.identifier_tokens(text)
        assert fast == plain
        assert list(fast) == list(plain)  # the same iteration order: the index keeps candidates in that order


def test_compiled_region_growth_is_the_galloping_search(monkeypatch: Any) -> None:
    compiled = _compiled()
    rng = random.Random(70)
    for text in _random_texts(71, 3000):
        for _ in range(5):
            if len(text) < 2:
                break
            a = rng.randint(1, len(text))
            p = rng.randint(1, a)
            monkeypatch.setattr(repetition_module, "_speedups", None)
            plain = _region_at(text, a, p)
            monkeypatch.setattr(repetition_module, "_speedups", compiled)
            assert Region(*compiled.region_at(text, a, p), p) == plain == _region_at(text, a, p)


def test_compiled_may_repeat_is_the_xor_runs(monkeypatch: Any) -> None:
    compiled = _compiled()
    rng = random.Random(72)
    seqs = [bytes(rng.randrange(rng.randint(1, 6)) for _ in range(rng.randint(0, 70))) for _ in range(20000)]
    monkeypatch.setattr(degeneracy_module, "_speedups", None)
    for seq in seqs:
        assert compiled.may_repeat(seq, MAX_UNIT_TOKENS, MIN_REPS) is _may_repeat(seq), seq


def _code_point_texts(seed: int, count: int) -> list[str]:
    """Texts of code points from every plane and of every string kind (ASCII, Latin-1, UCS-2, UCS-4), surrogates
    and the lead-byte boundaries (0x7f/0x80, 0x7ff/0x800, 0xffff/0x10000) among them, long ones too."""
    rng = random.Random(seed)
    edges = [0, 0x7F, 0x80, 0xBF, 0xFF, 0x100, 0x7FF, 0x800, 0xD7FF, 0xD800, 0xDBFF, 0xDC00, 0xDFFF, 0xE000]
    edges += [0xFFFF, 0x10000, 0x3FFFF, 0x40000, 0x10FFFF]
    texts = ["", "plain ASCII", "é", "\ud800", "\U0010ffff", "x" * 100000 + "\u00e9", "\u4e2d" * 50000]
    for _ in range(count):
        top = rng.choice((0x80, 0x100, 0x3000, 0x10000, 0x110000))
        n = rng.choice((1, 3, 12, 200))
        texts.append(
            "".join(chr(rng.choice((rng.randrange(top), rng.choice(edges), 0x61))) for _ in range(rng.randint(0, n)))
        )
    return texts + _random_texts(seed + 1, 1000)


def test_compiled_may_hold_is_exact_and_within_the_lead_bytes(monkeypatch: Any) -> None:
    compiled = _compiled()
    rng = random.Random(73)
    blocks = [SUSPECT_RANGE, _CJK_RANGE, _NON_LATIN_RANGE, (0x80, 0x80), (0x800, 0xFFFF), (0x10000, 0x10FFFF)]
    blocks += [(0xD800, 0xDFFF), (0xE000, 0xE000), (0x7FF, 0x800)]
    looser = 0
    for text in _code_point_texts(74, 4000):
        points = set(map(ord, text))
        ranges = [*blocks, *[sorted((rng.randrange(0x80, 0x110000), rng.randrange(0x80, 0x110000))) for _ in range(3)]]
        for low, high in ranges:
            monkeypatch.setattr(charsets_module, "_speedups", None)
            plain = may_hold(text, low, high)
            monkeypatch.setattr(charsets_module, "_speedups", compiled)
            exact = may_hold(text, low, high)
            assert exact is any(low <= p <= high for p in points), (text[:50], low, high)
            assert plain or not exact  # the lead bytes never hide a character of the block
            looser += plain and not exact
    assert looser > 100  # the exact test skips searches that the lead bytes let through


def test_compiled_code_point_range_is_the_character_test(monkeypatch: Any) -> None:
    compiled = _compiled()
    rng = random.Random(75)
    for text in _code_point_texts(76, 4000):
        points = set(map(ord, text))
        ranges = [(0xD800, 0xDFFF), (0, 0), (0x80, 0x10FFFF), (5, 4), (-3, 0x61), (0x110000, 2**40)]
        ranges += [sorted((rng.randrange(0x110000), rng.randrange(0x110000))) for _ in range(3)]
        for low, high in ranges:
            assert compiled.any_in(text, low, high) is any(low <= p <= high for p in points), (text[:50], low, high)
        monkeypatch.setattr(textual_module, "_speedups", None)
        plain = _has_surrogate(text)
        monkeypatch.setattr(textual_module, "_speedups", compiled)
        assert _has_surrogate(text) is plain
    with pytest.raises(TypeError):
        compiled.any_in(None, 0, 1)


def _identifier_sets(seed: int, count: int) -> list[set[bytes]]:
    """Token sets as the index meets them: real text, paths and names with digits, dots and dashes at the edges,
    non-ASCII and very long tokens, empty sets."""
    rng = random.Random(seed)
    pieces = ["src", "pkg", "module_1", "django", "db", "models", "query.py", "a3f9c2d1", "kimi-k3", "v1.2", "-", "."]
    pieces += ["é", "中", "\U0001f600", "0", "/", "_", "x" * 300]
    sets: list[set[bytes]] = [set()]
    for text in _random_texts(seed, count // 2):
        sets.append(identifiers_module.tokens(text))
    for _ in range(count // 2):
        sets.append(
            {
                "".join(rng.choice(pieces) for _ in range(rng.randint(1, 6))).encode("utf-8", "surrogatepass")
                for _ in range(rng.randint(0, 40))
            }
        )
    return sets


def _halves_as_multisets(
    halves: dict[tuple[int, int, bytes], list[bytes]],
) -> dict[tuple[int, int, bytes], list[bytes]]:
    return {key: sorted(values) for key, values in halves.items()}


def test_compiled_index_add_is_the_set_operations(monkeypatch: Any) -> None:
    compiled = _compiled()
    plain, fast = IdentifierIndex(), IdentifierIndex()
    for i, toks in enumerate(_identifier_sets(77, 3000)):
        monkeypatch.setattr(identifiers_module, "_speedups", None)
        plain.add(set(toks))
        monkeypatch.setattr(identifiers_module, "_speedups", compiled)
        fast.add(set(toks))
        if i % 100 and i < 2990:
            continue
        assert fast.known == plain.known
        # The same candidates under every key; their order is a set's (the hash seed's) in either path.
        assert _halves_as_multisets(fast.halves) == _halves_as_multisets(plain.halves)
    assert len(plain.halves) > 1000
    with pytest.raises(TypeError):
        compiled.index_add({"str"}, set(), {}, 6)
    with pytest.raises(ValueError):
        compiled.index_add(fast.known, fast.known, fast.halves, 6)


def test_compiled_written_lookups_are_the_unknown_marked_tokens(monkeypatch: Any) -> None:
    compiled = _compiled()
    index = IdentifierIndex()
    sets = _identifier_sets(78, 2000)
    for toks in sets[: len(sets) // 2 : 2]:
        index.add(toks)
    for written in sets:
        unknown = written - index.known
        marked = {t for t in unknown if re.search(rb"[0-9_./-]", t)}
        expected = compiled.unknown_marked(marked, index.known, index.halves, 6)
        fast = compiled.written_lookups(written, index.known, index.halves, 6)
        assert sorted(fast) == sorted(expected)
        monkeypatch.setattr(identifiers_module, "_speedups", None)
        plain = identifiers_module._written_lookups(written, index)
        monkeypatch.setattr(identifiers_module, "_speedups", compiled)
        assert set(fast) <= set(plain)
        assert all(index.original_of(t) is None for t in set(plain) - set(fast))
    with pytest.raises(TypeError):
        compiled.written_lookups([b"ok_1", 3], set(), {}, 6)


def test_compiled_segment_keys_are_the_segments_keys(monkeypatch: Any) -> None:
    compiled = _compiled()
    rng = random.Random(79)
    marks = [".", "!", "?", " ", "\n", "\t", "\r", "a", "b", "\u3002", "\uff01", "\uff1f", "é", "\U0001f600", "x y"]
    texts = _random_texts(80, 3000) + _texts() + ["", ".", ". ", "\n\n\n", ".\n\n\n.\n", "!\n\n", "a" * 50000]
    texts += ["".join(rng.choice(marks) for _ in range(rng.randint(0, 300))) for _ in range(6000)]
    texts += [" ".join(rng.choice(["The fix is in the parser.", "x!", "y?\n", "\n\n", "z.\n"]) for _ in range(80))]
    for text in texts:
        segments = neardup_module._segments(text)
        plain = (
            len(segments),
            len({s[:KEY_CHARS] for s in segments}),
            len({s[-KEY_CHARS:] for s in segments}),
        )
        assert compiled.segment_keys(_unfenced(text[-NEAR_READS:]), KEY_CHARS) == plain, text[-200:]
        for limit in (1.0, 3.0):
            monkeypatch.setattr(neardup_module, "_speedups", None)
            count = near_duplicates(text, limit)
            monkeypatch.setattr(neardup_module, "_speedups", compiled)
            assert near_duplicates(text, limit) == count
    with pytest.raises(ValueError):
        compiled.segment_keys("a. b", 0)


def test_compiled_repeated_char_is_the_run_search(monkeypatch: Any) -> None:
    compiled = _compiled()
    rng = random.Random(81)
    marks = "!?,;\uff01\uff1f\uff0c\uff1b\u3002\u3001"
    alphabet = [*marks, "a", " ", "\n", "é", "\U0001f600", "!!!!", "\u3002" * 5]
    texts = [*_code_point_texts(82, 1000), "", "!" * 16, "!" * 15, "a" + "\u3002" * 16, "\U0001f600" * 40]
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 200))) for _ in range(5000)]
    texts += [rng.choice(marks) * rng.randint(10, 20) + "x" for _ in range(500)] + ["," * 10**5 + ";"]
    hits = 0
    for text in texts:
        for chars, length in ((marks, 16), ("!?,;", 16), ("a", 1), ("\u3002", 3), ("", 2), ("\U0001f600", 2)):
            plain = any(c * length in text for c in chars)
            assert compiled.repeated_char(text, chars, length) is plain, (text[:60], chars, length)
            hits += plain
        monkeypatch.setattr(repetition_module, "_speedups", None)
        span = repetition_module._punctuation_span("content", text)
        monkeypatch.setattr(repetition_module, "_speedups", compiled)
        assert repetition_module._punctuation_span("content", text) == span
    assert hits > 1000
    with pytest.raises(ValueError):
        compiled.repeated_char("abc", "a", 0)


def test_compiled_ascii_code_hint_is_the_two_searches(monkeypatch: Any) -> None:
    compiled = _compiled()
    rng = random.Random(83)
    lines = [line for text in _random_texts(84, 2000) for line in text.split("\n") if line.isascii()]
    lines += ["".join(chr(rng.randrange(128)) for _ in range(rng.randint(0, 80))) for _ in range(5000)]
    lines += ["", "a..b", "a...b", "::", ":::", "-*+", "x" * 100000 + "9"]
    for line in lines:
        assert compiled.ascii_code_hint(line) is (_CODE_HINT.search(line) is not None), line
        monkeypatch.setattr(degeneracy_module, "_speedups", None)
        plain = _code_hint(line)
        monkeypatch.setattr(degeneracy_module, "_speedups", compiled)
        assert _code_hint(line) is plain
    with pytest.raises(ValueError):
        compiled.ascii_code_hint("é")


def test_compiled_non_ascii_words_are_the_regex_words(monkeypatch: Any) -> None:
    compiled = _compiled()
    rng = random.Random(85)
    alphabet = [
        "a",
        " ",
        "\n",
        "\t",
        "é",
        "’",
        "\u00a0",
        "\u2028",
        "\u3000",
        "\x1c",
        "\x85",
        "\U0001f600",
        "\ud800",
        "x1",
    ]
    texts = _code_point_texts(86, 2000) + _random_texts(87, 2000) + ["é" * 100000, ("a é " * 30000)]
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 120))) for _ in range(5000)]
    for text in texts:
        plain = [(m.start(), m.end()) for m in _NON_ASCII_WORD.finditer(text)]
        assert compiled.non_ascii_words(text) == plain, text[:80]
        monkeypatch.setattr(bytelevel_module, "_speedups", None)
        assert list(non_ascii_words(text)) == plain
        monkeypatch.setattr(bytelevel_module, "_speedups", compiled)
        assert list(non_ascii_words(text)) == plain
    with pytest.raises(TypeError):
        compiled.non_ascii_words(b"bytes")


def _glued_texts(seed: int, count: int) -> list[str]:
    """Prose, words of the lexicon and function words glued at random (`thatshould`, `Ihope`, compounds, capitals),
    with code marks, URLs, indented lines and other alphabets among them."""
    rng = random.Random(seed)
    words = sorted(w for w in lexicon() if len(w) < 9)
    function_words = sorted(FUNCTION_WORDS)
    marks = [" ", " ", "\n", "\n    ", "\t", "`", "```\n", "://", "é", "_", "-", ".", "x1", "İ", "\U0001f600", "ß"]
    out = []
    for _ in range(count):
        pieces = []
        for _ in range(rng.randint(0, 60)):
            kind = rng.random()
            if kind < 0.4:
                pieces.append(rng.choice(function_words))
            elif kind < 0.7:
                pieces.append(rng.choice(words))
            elif kind < 0.75:
                pieces.append(rng.choice(words).capitalize())
            else:
                pieces.append(rng.choice(marks))
        out.append("".join(pieces))
    return out


def test_glued_runs_behind_the_candidates_are_the_runs_of_every_word(monkeypatch: Any) -> None:
    texts = _glued_texts(90, 3000) + _random_texts(91, 2000) + _texts()
    texts += ["thatshould " * 3000, "x" + "thatshould" * 7, "é" * 9000 + "passall thatshould"]
    words = lexicon()
    found = 0
    for text in texts:
        base = max(0, len(text) - READS)
        every_word = _runs(text[base:], base, words)
        assert glued_runs(text) == every_word, text[:80]
        monkeypatch.setattr(glued_module, "_speedups", None)
        assert glued_runs(text) == every_word, text[:80]
        monkeypatch.setattr(glued_module, "_speedups", degeneracy_module._speedups)
        found += bool(every_word)
    assert 500 < found < len(texts) - 500


def test_blanking_code_never_cuts_a_run_of_letters() -> None:
    # glued_runs looks for candidates in the tail before its code is blanked: every run read after is one before.
    for text in _glued_texts(92, 3000) + _random_texts(93, 2000):
        assert set(_RUN.findall(_blank_code(text))) <= set(_RUN.findall(text)), text[:80]


def test_compiled_glued_points_are_the_python_candidates() -> None:
    compiled = _compiled()
    words = lexicon()
    texts = _glued_texts(94, 5000) + _random_texts(95, 2000) + _texts()
    texts += ["".join(random.Random(i).choice("aItheshouldpass ") for _ in range(70)) for i in range(2000)]
    found = 0
    for text in texts:
        fast = compiled.glued_points(text, words, FUNCTION_WORDS, COMPOUND_HEADS, COMPOUND_TAILS, MIN_RUN, MAX_RUN)
        runs = [run for run in map(str.lower, _SUSPECT.findall(text)) if not known(run, words)]
        assert fast == [run for run in runs if glue_points(run, words)], text[:80]
        assert set(fast) == set(_glued_candidates_python(text, words))
        assert set(map(str.lower, _SUSPECT.findall(text))) == {
            r.lower() for r in _RUN.findall(text) if MIN_RUN <= len(r) <= MAX_RUN and r[1:].islower()
        }
        found += bool(fast)
    assert 1000 < found < len(texts) - 1000
    other = frozenset({"that", "should"})  # another lexicon: its own table
    assert compiled.glued_points("thatshould", other, FUNCTION_WORDS, COMPOUND_HEADS, COMPOUND_TAILS, 5, 64) == [
        "thatshould"
    ]
    assert compiled.glued_points("thatshould", words, FUNCTION_WORDS, COMPOUND_HEADS, COMPOUND_TAILS, 5, 64) == [
        "thatshould"
    ]
    with pytest.raises(TypeError):
        compiled.glued_points("thatshould", set(words), FUNCTION_WORDS, COMPOUND_HEADS, COMPOUND_TAILS, 5, 64)
    with pytest.raises(ValueError):
        compiled.glued_points("thatshould", words, FUNCTION_WORDS, COMPOUND_HEADS, COMPOUND_TAILS, 5, 65)


def _split_texts(seed: int, count: int) -> list[str]:
    """Words of the wide lexicon split at random (`gener ative`), spelled letter by letter (`a r m o r`, capitals,
    consecutive letters), with doubled spaces, spaced marks, code marks, URLs, indented lines, digits, `_` and other
    alphabets (letters of the regex class that are not ASCII: `é`, `ª`, `²`, `½`) among them."""
    rng = random.Random(seed)
    words = sorted(w for w in wide_lexicon() if len(w) < 12)
    marks = [" ", " ", "  ", " , ", " . ", " :", " ;\n", "\n", "\n    ", "\t", "`", "```\n", "://", "é", "_", "1"]
    marks += ["ª", "²", "½", "İ", "\u3000", "\u00a0", "\x1c", "\U0001f600", "’", "'", "-", "."]
    out = []
    for _ in range(count):
        pieces = []
        for _ in range(rng.randint(0, 80)):
            kind = rng.random()
            word = rng.choice(words)
            if kind < 0.35:
                pieces.append(word + " ")
            elif kind < 0.5:
                cut = rng.randint(1, len(word) - 1)
                pieces.append(word[:cut] + rng.choice((" ", " ", "  ")) + word[cut:] + " ")
            elif kind < 0.55:
                pieces.append(" ".join(rng.choice((word, word, word.capitalize(), "abcdef"))) + " ")
            elif kind < 0.6:
                pieces.append(word.capitalize() + rng.choice(("", "X", "s")) + " ")
            elif kind < 0.62:
                pieces.append("q" * rng.randint(60, 120) + " ")  # longer than the words the C tables keep
            else:
                pieces.append(rng.choice(marks))
        out.append("".join(pieces))
    return out


def _piece_pairs_plain(prose: str, pieces: set[str]) -> list[tuple[int, int, str, str]]:
    """splitwords._piece_pairs as the pure-Python loop: every match of `_PIECE`, the next search at its second piece."""
    out = []
    at = 0
    while (m := _PIECE.search(prose, at)) is not None:
        at = m.start(2)
        if m.group(1).lower() in pieces or m.group(2) in pieces:
            out.append((m.start(), m.end(), m.group(1).lower(), m.group(2)))
    return out


def test_compiled_split_statistics_are_the_python_statistics(monkeypatch: Any) -> None:
    compiled = _compiled()
    words = wide_lexicon()
    texts = _split_texts(96, 600) + _random_texts(97, 300) + _texts()[::5]
    texts += ["gener ative " * 2000, "a r m o r " * 500 + "é", "x" + "  y" * 3000, "é" * 5000 + " a  b " * 20]
    found = {"spaced_gaps": 0, "split_pieces": 0, "spaced_letters": 0}
    for text in texts:
        prose = _split_prose(text)
        gaps = _GAP.findall(prose)
        assert compiled.gap_counts(prose) == (len(gaps), gaps.count("  "), len(_SPACED_MARK.findall(prose)))
        tokens = {t.lower() for t in _TOKEN.findall(prose)}
        distinct, unknown = compiled.split_tokens(prose, words, lexicon())
        assert distinct == len(tokens)
        assert len(unknown) == len(set(unknown))
        assert set(unknown) == {t for t in tokens if len(t) >= 2 and not _split_word(t, words)}, text[:80]
        fast = [spaced_gaps(text), split_pieces(text), spaced_letters(text)]
        monkeypatch.setattr(splitwords_module, "_speedups", None)
        assert [spaced_gaps(text), split_pieces(text), spaced_letters(text)] == fast, text[:80]
        monkeypatch.setattr(splitwords_module, "_speedups", compiled)
        # the prefilter of spaced_letters: a run found spells MIN_SPELLED lowercase letters one space apart
        tail = text[-SPLIT_READS:]
        assert compiled.spelled_run(tail, MIN_SPELLED) == bool(re.search(r"[a-z]( [a-z]){4}", tail))
        assert _split_blank(tail) == _CODE.sub(lambda m: " " * len(m.group()), tail)
        pieces = set(unknown) | {t for t in tokens if len(t) % 5 == 0}
        assert compiled.piece_pairs(prose, frozenset(pieces)) == _piece_pairs_plain(prose, pieces), text[:80]
        for name, value in zip(found, fast, strict=True):
            found[name] += bool(value)
    assert all(50 < n < len(texts) - 50 for n in found.values()), found
    long_word = "q" * 100
    assert compiled.split_tokens(f"{long_word} {long_word}s x", frozenset({long_word}), frozenset()) == (3, [])
    assert compiled.split_tokens("Gener ative", frozenset({"generative"}), frozenset()) == (2, ["gener", "ative"])
    with pytest.raises(TypeError):
        compiled.split_tokens("gener ative", set(words), lexicon())
    assert compiled.piece_pairs("Gener  ative-x gener ative summar ization", frozenset({"gener", "summar"})) == [
        (15, 26, "gener", "ative"),
        (21, 33, "ative", "summar"),
        (27, 41, "summar", "ization"),
    ]
    with pytest.raises(ValueError):
        compiled.spelled_run("a b c d e", 0)
    text = "the Gener ative model is a kind of model that we use for the summar  ization of a long text and it works"
    assert split_pieces(text) == [(4, 15, "generative"), (61, 76, "summarization")]
    monkeypatch.setattr(splitwords_module, "_speedups", None)
    assert split_pieces(text) == [(4, 15, "generative"), (61, 76, "summarization")]


def test_compiled_non_ascii_runs_are_the_regex_runs(monkeypatch: Any) -> None:
    compiled = _compiled()
    rng = random.Random(98)
    mojibake = ["┬┐C├│mo est├ís?", "Ø³Ù„Ø§Ù…", "РїСЂРёРІРµС‚", "Ð¿Ñ€Ð¸Ð²ÐµÑ‚", "Thatâ€™s", "ход", "├──", "é", "\ud800"]
    texts = _code_point_texts(99, 1000) + _random_texts(100, 1000) + ["é" * 50000, "a" * 50000, ""]
    texts += [
        " ".join(rng.choice([*mojibake, "a", "b c", "\U0001f600"]) for _ in range(rng.randint(0, 30)))
        for _ in range(3000)
    ]
    found = 0
    for text in texts:
        plain = [m.span() for m in codepages_module._RUN.finditer(text)]
        assert compiled.non_ascii_runs(text, codepages_module.MIN_RUN) == plain, text[:80]
        fast = codepages_module.codepage_runs(text)
        monkeypatch.setattr(codepages_module, "_speedups", None)
        assert codepages_module.codepage_runs(text) == fast
        monkeypatch.setattr(codepages_module, "_speedups", compiled)
        found += bool(fast[0])
    assert 300 < found < len(texts) - 300
    assert compiled.non_ascii_runs("aé b éé", 1) == [(1, 2), (5, 7)]
    with pytest.raises(ValueError):
        compiled.non_ascii_runs("éé", 0)


def test_code_to_newlines_and_blanking_without_impossible_alternatives_are_the_full_pattern() -> None:
    rng = random.Random(5)
    alphabet = list("ab `~:/ \n\t\r\xa0")
    texts = [REFERENCE[i : i + 700] for i in range(0, 200_000, 997)] + _random_texts(6, 1000)
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 60))) for _ in range(5000)]
    for text in texts:
        assert code_to_newlines(text) == _CODE.sub("\n", text)
        assert glued_module._blank_code(text) == _CODE.sub(lambda m: " " * len(m.group()), text)


def _salad_texts(seed: int, count: int) -> list[str]:
    """Prose, word salad of common and function words, code, punctuation and line breaks, short and long."""
    rng = random.Random(seed)
    vocabulary = [*sorted(FUNCTION_WORDS)[:40], "cat", "been", "your", "The", "I", "Sure,", "(see", "it.", "x1"]
    vocabulary += ["`code`", "http://a.b/c", "\n", "\n    indented", "’s", "哈", "\u2028", "é", "  ", "1,000", "—"]
    out = _random_texts(seed, count // 2) + _texts()[: count // 4]
    for _ in range(count - len(out)):
        out.append(" ".join(rng.choice(vocabulary) for _ in range(rng.randint(0, rng.choice((12, 70, 200))))))
    return out


def test_compiled_word_pairs_are_the_python_pairs(monkeypatch: Any) -> None:
    compiled = _compiled()
    texts = _salad_texts(71, 6000)
    fast = [implausible_pairs(text) for text in texts]
    fast_tails = [tail_pairs(text) for text in texts]
    monkeypatch.setattr(wordpairs_module, "_speedups", None)
    monkeypatch.setattr(tailsalad_module, "_speedups", None)
    assert [implausible_pairs(text) for text in texts] == fast
    assert [tail_pairs(text) for text in texts] == fast_tails
    assert sum(v < 0.0 for v in fast) > 500  # the pairs are read and scored, not only counted
    for text in texts:
        assert compiled.words_over(text, MAX_PAIR_WORDS) == (len(text.split(maxsplit=MAX_PAIR_WORDS)) > MAX_PAIR_WORDS)
    codes = wordpairs_module._codes()
    with pytest.raises(ValueError):  # a matrix too small for its classes
        compiled.pair_window("a b", {}, codes.code_of, b"", codes.n, codes.foreign, 24)
    with pytest.raises(TypeError):
        compiled.pair_window("a b", [], codes.code_of, codes.matrix, codes.n, codes.foreign, 24)


def test_compiled_plain_run_decides_as_the_stretches(monkeypatch: Any) -> None:
    compiled = _compiled()
    texts = _salad_texts(72, 6000)
    texts += [" ".join(["walk stroll wander roam drift"] * k) for k in range(1, 6)] + ["a  b", " x y", "é y z"]
    decided = 0
    for text in texts:
        window = text[-CONTENT_READS:]
        for min_run in (3, 8, 12):
            fast = compiled.plain_run(window, salad_module._ALL_FUNCTION_WORDS)
            monkeypatch.setattr(salad_module, "_speedups", None)
            slow = salad_module._run_bound(window, min_run)
            monkeypatch.setattr(salad_module, "_speedups", compiled)
            assert (fast >= min_run) == (slow >= min_run), window
            assert slow < min_run or fast == slow
            decided += slow >= min_run
    assert decided > 100
    assert compiled.plain_run("walk stroll the wander roam drift", salad_module._ALL_FUNCTION_WORDS) == 3
    assert compiled.plain_run("walk  stroll wander", salad_module._ALL_FUNCTION_WORDS) == 2


def test_the_clitic_prefilter_never_hides_a_doubled_clitic() -> None:
    rng = random.Random(73)
    pieces = ["'", "\u2019", "s", "ll", "re", "a", " ", "x", "'s", "\u2019t", "Let", "\n", "don", "é"]
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 25))) for _ in range(50_000)]
    texts += _random_texts(74, 500)
    matched = 0
    for text in texts:
        if salad_module._CLITIC_TWICE_QUICK.search(text) is not None:
            matched += 1
            assert salad_module._may_double_a_clitic(text), text
    assert matched > 1000
    assert salad_module.doubled_clitics("Let's's go, we’re’re here, don't") == 2


def test_the_last_sentence_end_by_rfind_is_the_regex_match() -> None:
    """tailsalad's stretch starts where `.*[.?!]\\s` (re.S, greedy) ends; `_last_sentence_end` finds the same place by
    `str.rfind` (marks followed by any `str.isspace` character, Unicode included), or -1 where the regex finds none."""
    from eval.classify.tailsalad import _LAST_SENTENCE_END, _last_sentence_end

    rnd = random.Random(7)
    alphabet = ".?! \n\t\r\x0b\x0c\x1c\u00a0\u2003ab."
    cases = ["", ".", ". ", "a.b. c", "end.", "x?\u00a0y", "a!b!c! ", REFERENCE[:256], REFERENCE[-300:]]
    cases += ["".join(rnd.choice(alphabet) for _ in range(rnd.randrange(0, 24))) for _ in range(20_000)]
    for case in cases:
        m = _LAST_SENTENCE_END.match(case)
        assert _last_sentence_end(case) == (m.end() if m else -1), repr(case)
