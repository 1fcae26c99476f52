"""Deterministic prompts as token ids, built from the served model's own tokenizer.

Text comes from a seeded word list (never special tokens) and is tokenized either locally (`tokenizer.json` in
the model directory, through `tokenizers`) or by the server's `/tokenize`. The same seed and tokenizer give the
same ids on every cohort, so outputs can be compared token by token; every record also keeps its prompt ids.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from pathlib import Path

Tokenize = Callable[[str], list[int]]

WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "state",
    "cache",
    "block",
    "token",
    "prefix",
    "decode",
    "prefill",
    "draft",
    "accept",
    "reject",
    "verify",
    "model",
    "server",
    "request",
    "stream",
    "batch",
    "kernel",
    "scan",
    "chunk",
    "layer",
    "head",
    "value",
    "key",
    "query",
    "error",
    "test",
    "patch",
    "repo",
    "file",
    "function",
    "return",
    "import",
    "class",
    "module",
    "python",
    "shell",
    "command",
    "output",
    "input",
    "path",
    "branch",
    "commit",
    "merge",
    "build",
    "install",
    "check",
    "format",
    "parse",
    "render",
    "update",
    "write",
    "read",
    "open",
    "close",
    "start",
    "stop",
    "wait",
    "retry",
    "limit",
    "window",
]


def local_tokenizer(model_dir: Path) -> Tokenize | None:
    """Tokenize with `model_dir/tokenizer.json` (no special tokens added), or None when there is none."""
    path = Path(model_dir) / "tokenizer.json"
    if not path.is_file():
        return None
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(path))
    return lambda text: list(tok.encode(text, add_special_tokens=False).ids)


def server_tokenizer(base_url: str, model: str, timeout_s: float = 60) -> Tokenize:
    """Tokenize with the server's `/tokenize` endpoint (vLLM's OpenAI-compatible server)."""
    import httpx

    def tokenize(text: str) -> list[int]:
        body = {"model": model, "prompt": text, "add_special_tokens": False}
        resp = httpx.post(f"{base_url}/tokenize", json=body, timeout=timeout_s)
        resp.raise_for_status()
        return [int(t) for t in resp.json()["tokens"]]

    return tokenize


class PromptBook:
    """Seeded prompts: `ids("warm-3", 160)` is always the same 160 token ids for one seed and tokenizer."""

    def __init__(self, tokenize: Tokenize, seed: int, texts: Sequence[str] | None = None) -> None:
        self._tokenize = tokenize
        self._seed = seed
        self._cache: dict[tuple[str, int], list[int]] = {}
        # In-distribution prompts (`prompt_text: agent_turns`): ids(key, n) is the last n tokens of texts drawn by
        # key and joined, so that a prompt ends where the last text ends (where the model speaks next).
        self._texts = list(texts or [])
        self._text_ids: dict[int, list[int]] = {}

    def text(self, key: str, words: int) -> str:
        rng = random.Random(f"specqual-canary:{self._seed}:{key}")
        return " ".join(rng.choice(WORDS) for _ in range(words))

    def tokenize(self, text: str) -> list[int]:
        return list(self._tokenize(text))

    def ids(self, key: str, n: int) -> list[int]:
        if self._texts:
            return self._text_window(key, n)
        if (key, n) not in self._cache:
            words = max(8, n)
            ids = self._tokenize(self.text(key, words))
            while len(ids) < n:
                words *= 2
                ids = self._tokenize(self.text(key, words))
            self._cache[(key, n)] = ids[:n]
        return list(self._cache[(key, n)])

    def _text_window(self, key: str, n: int) -> list[int]:
        if (key, n) not in self._cache:
            rng = random.Random(f"specqual-canary-text:{self._seed}:{key}")
            ids: list[int] = []
            while len(ids) < n:
                k = rng.randrange(len(self._texts))
                if k not in self._text_ids:
                    self._text_ids[k] = self._tokenize(self._texts[k])
                if not self._text_ids[k]:
                    raise ValueError(f"text {k} of the prompt corpus tokenizes to nothing")
                ids = self._text_ids[k] + ids
            self._cache[(key, n)] = ids[len(ids) - n :]
        return list(self._cache[(key, n)])

    def tail_token(self, key: str, avoid: int) -> int:
        """One token that differs from `avoid` (the token the warm prompt had at the same position)."""
        for tok in self.ids(key, 16):
            if tok != avoid:
                return tok
        raise ValueError("the tokenizer gave no usable tail token")
