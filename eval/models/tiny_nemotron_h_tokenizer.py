"""A byte-level BPE tokenizer trained locally with `tokenizers` on a synthetic, seeded corpus (no downloads).

The corpus mixes English-like prose, shell commands, Python and JSON tool calls, so that prompts the canary
builds (text, code, tool-call chats) tokenize into several tokens per word, like a real tokenizer would.
"""

from __future__ import annotations

import random
from pathlib import Path

WORDS = [
    "the",
    "of",
    "and",
    "to",
    "in",
    "is",
    "that",
    "for",
    "it",
    "as",
    "with",
    "was",
    "on",
    "be",
    "by",
    "this",
    "are",
    "from",
    "or",
    "an",
    "have",
    "not",
    "at",
    "which",
    "but",
    "all",
    "file",
    "line",
    "error",
    "test",
    "value",
    "function",
    "return",
    "class",
    "import",
    "def",
    "self",
    "list",
    "string",
    "number",
    "data",
    "model",
    "server",
    "request",
    "response",
    "token",
    "state",
    "cache",
    "prefix",
    "block",
    "decode",
    "prefill",
    "speculative",
    "draft",
    "accepted",
    "patch",
    "repo",
    "issue",
    "bug",
    "fix",
    "run",
    "build",
    "install",
    "check",
    "output",
    "input",
    "path",
    "directory",
    "command",
    "python",
    "shell",
    "json",
    "tool",
    "call",
]
COMMANDS = ("ls -l", "cat setup.py", "grep -rn TODO src", "python -m pytest -x", "git diff", "sed -n 1,40p a.py")
CODE = (
    "def {w}(x):\n    return x + {n}\n",
    "for i in range({n}):\n    print(i, '{w}')\n",
    "class {W}:\n    def __init__(self):\n        self.{w} = {n}\n",
    "if {w} is None:\n    raise ValueError('{w}')\n",
)


def corpus(seed: int, lines: int = 3000) -> list[str]:
    """Deterministic training text for `seed`."""
    rng = random.Random(f"tiny-nemotron-h-corpus-{seed}")
    out: list[str] = []
    for _ in range(lines):
        kind = rng.randrange(4)
        w = rng.choice(WORDS)
        if kind == 0:
            out.append(" ".join(rng.choice(WORDS) for _ in range(rng.randrange(5, 16))).capitalize() + ".")
        elif kind == 1:
            out.append(rng.choice(CODE).format(w=w, W=w.capitalize(), n=rng.randrange(100)))
        elif kind == 2:
            out.append('<tool_call>\n{"name": "bash", "arguments": {"command": "' + rng.choice(COMMANDS) + '"}}')
        else:
            out.append(f"$ {rng.choice(COMMANDS)}\n{w}: {rng.randrange(1000)} {rng.choice(WORDS)}")
    return out


def train_byte_level_bpe(out_dir: Path, vocab_size: int, seed: int, special: list[str], added: list[str]) -> None:
    """Train and save `tokenizer.json`: special tokens get ids 0.., `added` tokens stay visible in text."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size - len(added),
        special_tokens=special,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(corpus(seed), trainer=trainer)
    tok.add_tokens([AddedToken(t, special=False, normalized=False) for t in added])
    tok.save(str(Path(out_dir) / "tokenizer.json"))
