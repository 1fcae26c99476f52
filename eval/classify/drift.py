"""Language drift into CJK (classifier 1.13.0): an English reply whose lines switch into Chinese mid-line (`**Huai
River** (1,000 km): 是中国南北方的传统分界线之一。`), or a Han word glued into English prose (`the retry loop真 hides
it`). A model whose sampling or quantization went wrong drifts into the other language its training data holds most
of; a healthy English reply names a Chinese word in quotes, brackets or code.

The statistic `language_drift` counts the lines of a field's prose (code, URLs, quoted and bracketed spans blanked)
in which a run of CJK characters (Han, kana, Hangul) follows a Latin word of two letters or more on the same line
and is either glued to a Latin letter or holds a sentence (MIN_SWITCH CJK characters, more than the Latin letters
after it), when such lines are most of the lines that hold CJK (else 0), and provided the field *opens in English*:
before its first CJK character the prose holds at least MIN_OPENING words of the English lexicon (lexicon.txt and
the function words), at least half of its Latin words are English, MIN_FUNCTION of them and a FUNCTION_SHARE of them
are function words (sentences, not labels such as a catalog's `Project-Id-Version` header) and nine letters in ten
are Latin. Chinese developer prose that mixes in Latin names (`用pip安装`)
opens in Han and is not read; gettext catalogs of Chinese, Japanese and Korean are the hard negatives of the
calibration. Only the content field is read (eval/classify/repetition.py): reasoning models mix languages in their
thinking while healthy. A conversation that holds CJK text or names the languages or a translation is not read
either (`asked_for`). The count beyond which a field drifts is calibrated on real clean text (`python -m
eval.classify.calibrate --update language_drift`, degeneracy.json: at most `alpha` of the dev fields and the gettext
catalogs' pieces beyond it).
"""

from __future__ import annotations

import re
from functools import cache

from eval.classify.degeneracy import FUNCTION_WORDS, calibrated
from eval.classify.glued import _blank_code, known, lexicon

READS = 4096  # the end of a field is read, as the other salad statistics do
MIN_OPENING = 3  # English words before the first CJK character
MIN_FUNCTION = 2  # of them function words
FUNCTION_SHARE = 0.2  # and at least this share of its Latin words
MIN_SWITCH = 8  # CJK characters in the rest of a line that switches, unless glued to a Latin word
_CJK = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]+")
# Quoted and bracketed spans: a gloss (`“air”（空气）`), a name (`Chinese (中文)`), a quoted word.
_DELIMITED = re.compile(
    '"[^"\n]*"|\u201c[^\u201d\n]*\u201d|\u300c[^\u300d\n]*\u300d|\u300e[^\u300f\n]*\u300f'
    "|\\([^()\n]*\\)|\uff08[^\uff08\uff09\n]*\uff09|\\[[^\\[\\]\n]*\\]|\u3010[^\u3011\n]*\u3011"
)
_LATIN_WORD = re.compile(r"[A-Za-z]{2,}")
_LATIN_LETTERS = re.compile("[A-Za-z]")
_LETTER = re.compile(r"[^\W\d_]")


def _blank(text: str) -> str:
    text = _blank_code(text)
    return _DELIMITED.sub(lambda m: " " * len(m.group()), text)


def opens_in_english(opening: str) -> bool:
    """The prose before the first CJK character is English (module docstring)."""
    words = _LATIN_WORD.findall(opening)
    if len(words) < MIN_OPENING:
        return False
    vocabulary = lexicon()
    english = sum(known(w.lower(), vocabulary) for w in words)
    if english < MIN_OPENING or 2 * english < len(words):
        return False
    function = sum(w.lower() in FUNCTION_WORDS for w in words)
    if function < MIN_FUNCTION or FUNCTION_SHARE * len(words) > function:
        return False  # names and labels (`Project-Id-Version: Linux-PAM`), not sentences
    letters = _LETTER.findall(opening)
    latin = sum(c.isascii() for c in letters)
    return 10 * latin >= 9 * len(letters)


def language_drift(text: str) -> int:
    """The statistic: lines that switch from Latin words into CJK, in a field that opens in English."""
    tail = text[-READS:]
    if tail.isascii() or _CJK.search(tail) is None:
        return 0
    prose = _blank(tail)
    first = _CJK.search(prose)
    if first is None or not opens_in_english(prose[: first.start()]):
        return 0
    lines: set[int] = set()
    cjk_lines: set[int] = set()
    for m in _CJK.finditer(prose, first.start()):
        line_start = prose.rfind("\n", 0, m.start()) + 1
        cjk_lines.add(line_start)
        if line_start in lines or _LATIN_WORD.search(prose, line_start, m.start()) is None:
            continue
        before = prose[m.start() - 1]
        if not (before.isascii() and before.isalpha()):  # not glued to a Latin word: a sentence, not a word named
            line_end = prose.find("\n", m.start())
            rest = prose[m.start() : len(prose) if line_end < 0 else line_end]
            cjk = sum(map(len, _CJK.findall(rest)))
            if cjk < MIN_SWITCH or cjk <= len(_LATIN_LETTERS.findall(rest)):
                continue
        lines.add(line_start)
    # Most lines that hold CJK must switch into it from English: a catalog whose English licence text is followed
    # by lines of translations (a few of them naming an English option first) is a CJK text, not a drifting one.
    return len(lines) if 2 * len(lines) > len(cjk_lines) else 0


@cache
def threshold() -> float:
    """The calibrated count (degeneracy.json); a missing entry never fires."""
    return calibrated("language_drift", float("inf"))


# A conversation that shows CJK text or names the languages: the reply may answer in them (a translation, a word
# and its reading) and is not read.
_ASKED = re.compile(r"(?i)\b(?:chinese|mandarin|cantonese|japanese|korean|kanji|hanzi|hangul|translat\w*)\b")


def asked_for(chunks: list[str]) -> bool:
    """The conversation so far holds CJK text or names a CJK language or a translation."""
    return any(_CJK.search(c) is not None or _ASKED.search(c) is not None for c in chunks)
