"""`leaked_special_token`: a chat-template or vocabulary special token written as text (`<|im_end|>`,
`<|eot_id|>`, `<｜end▁of▁sentence｜>`, `<end_of_turn>`, `<pad>`, `<unk>`, a trailing `</s>`, a run of `<s>`), and the
markers of templates that are not `<|...|>` tokens (`[INST]`, `<<SYS>>`, `[AVAILABLE_TOOLS]`, `[gMASK]`,
`<reserved_106>`, `]~b]`, `<extra_id_1>`, `<fim_middle>`, `[control_11]`, Gemma's `<unused6226>`), and a `<|token`
opening that the reply ends in (the stream stopped inside a marker).

A healthy server never renders these in a reply: they end generation or are skipped when detokenizing. Tool-call
tokens of a known family (`<|python_tag|>`, `<|channel|>`, DeepSeek's tool-call tokens) are `leaked_tool_xml`'s
business and are not repeated here. Clean: a token in inline code, a fenced block or quotes, named mid-sentence
in prose, or on a line copied from the conversation (a model reading a chat template).
"""

from __future__ import annotations

import re
from itertools import islice

from eval.classify.context import Context
from eval.classify.formats import _alternatives, any_marker
from eval.classify.markup import _copied, _in_code_or_quotes, _in_inline_code, mentioned
from eval.classify.model import MAX_SPANS, Span, Turn, span_at

TEMPLATE = (
    r"\[/?INST\]|<</?SYS>>"
    r"|\[/?(?:SYSTEM_PROMPT|AVAILABLE_TOOLS|TOOL_RESULTS|TOOL_CONTENT)\]"
    r"|\[gMASK\]|<reserved_\d{1,4}>|<_(?:user|bot|end|system)>"
    r"|<(?:beginning|end)_of_sentence>|\]~!b\[|\]~b\]|\[e~\["
    r"|<seed:(?:bos|eos)>|<extra_id_\d{1,3}>|<fim_(?:prefix|middle|suffix|pad)>"
    r"|\[control_\d{1,4}\]"  # Mistral's reserved control tokens (v3 and Tekken vocabularies)
    r"|<unused\d{1,5}>|<(?:start|end)_of_image>"  # Gemma's reserved placeholders and image markers (1.10.0)
)
# A token cut by the end of the reply: the stream stopped inside a marker (`...<|tool_call`, `<|im_end|`).
CUT_MARKER = r"<\|[A-Za-z][A-Za-z0-9_]{1,30}\|?\s*\Z"
_TOKEN = re.compile(
    r"<\|[A-Za-z][A-Za-z0-9_]{1,30}\|>"  # <|im_end|>, <|endoftext|>, <|eot_id|>, <|EOT|>, <|end|>, <|user|>
    r"|<｜[^｜<>\n]{1,40}｜>"  # <｜end▁of▁sentence｜>, <｜Assistant｜>
    r"|<(?:start|end)_of_turn>|(?:<(?:pad|unk|eos|bos|mask)>)+|\[(?:PAD|UNK)\](?:\[(?:PAD|UNK)\])*"
    r"|</s>\s*\Z|(?:</s>){2,}|(?:<s>){2,}"
    # Templates whose markers are not `<|...|>` tokens (the vocabularies' own special tokens, nothing guessed):
    # Llama 2 / Mistral instructions, Mistral's control tokens (v3, Tekken), ChatGLM, Baichuan, TeleFLM,
    # MiniMax (M1 and M2), Seed-OSS, Nemotron-4 / T5 sentinels, StarCoder's fill-in-the-middle tokens.
    # (`<sop>`, `<file_sep>`, `<repo_name>` are left out: ordinary tags and regex groups look the same.)
    rf"|{TEMPLATE}|{CUT_MARKER}"
)
_FAST = re.compile(rf"<\||<｜|_of_turn>|<(?:pad|unk|eos|bos|mask)>|\[(?:PAD|UNK)\]|</s>|<s><s>|{TEMPLATE}")
_TOOL_TOKENS = any_marker("auto")


def _by_start(starts: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("|".join(a for a in _alternatives(_FAST.pattern) if a.startswith(starts)))


# `_FAST` split by what its alternatives start with, each searched only where that character is: the alternation
# as a whole is tried at every `_`, `[` and `]` of prose and code (`__init__`, `list[int]`).
_FAST_ANGLE = _by_start(("<",))
_FAST_SQUARE = _by_start(("\\[",))
_FAST_CLOSE = _by_start(("\\]",))
_FAST_LITERAL = "_of_turn>"
assert len(_alternatives(_FAST.pattern)) == sum(
    len(_alternatives(p.pattern)) for p in (_FAST_ANGLE, _FAST_SQUARE, _FAST_CLOSE)
) + _alternatives(_FAST.pattern).count(_FAST_LITERAL)


def _may_hold_token(text: str) -> bool:
    """`_FAST.search(text) is not None`."""
    return (
        ("<" in text and _FAST_ANGLE.search(text) is not None)
        or ("[" in text and _FAST_SQUARE.search(text) is not None)
        or _FAST_LITERAL in text
        or ("]" in text and _FAST_CLOSE.search(text) is not None)
    )


def detect_leaked_special_token(turn: Turn, ctx: Context) -> list[Span]:
    spans: list[Span] = []
    for name, text in turn.text_fields():
        if not text or ("<" not in text and "[" not in text) or not _may_hold_token(text):
            continue
        for m in islice(_TOKEN.finditer(text), MAX_SPANS * 4):
            start, end = m.start(), m.end()
            if _TOOL_TOKENS.match(text, start) is not None:
                continue  # a tool-call token: leaked_tool_xml
            if _in_inline_code(text, start) or _in_code_or_quotes(text, start, end) or mentioned(text, start, end):
                continue
            if text[start - 2 : start] == "?P":
                continue  # a regex's named group (`(?P<_end>...)`)
            if _copied(text, start, end, ctx):
                continue
            spans.append(span_at(name, text, start, end, "special token as text"))
            if len(spans) >= MAX_SPANS:
                break
    return spans
