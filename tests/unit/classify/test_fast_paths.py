"""The classifier's fast paths (issue 30, speed) give exactly what the plain computations give."""

from __future__ import annotations

import random
import re
from pydoc_data.topics import topics

from eval.classify.bytelevel import _NON_ASCII_WORD, non_ascii_words
from eval.classify.degeneracy import (
    _CODE_HINT,
    FUNCTION_WORDS,
    TAIL_CHARS,
    TOKEN_CHARS,
    _code_hint,
    _last_tokens,
    _window_tokens,
    degenerate,
    prose,
    prose_degenerate,
    statistics,
)
from eval.classify.neardup import near_duplicates
from eval.classify.spacing import _CODE, _chunks_of, _long_chunks, strip_code

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
