"""Load a tokenizer for token-id based checks, without making `transformers` a requirement.

A `tokenizer.json` file (or a directory holding one) is read with the `tokenizers` library; any other directory
with `transformers`' AutoTokenizer (local files only: nothing is downloaded). Both are imported only here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


class TokenizerError(Exception):
    pass


def load_tokenizer(path: Path) -> Any:
    json_file = path if path.is_file() else path / "tokenizer.json"
    if json_file.is_file():
        try:
            from tokenizers import Tokenizer
        except ImportError:
            pass
        else:
            try:
                return Tokenizer.from_file(str(json_file))
            except Exception as e:
                raise TokenizerError(f"{json_file}: {e}") from e
    if not path.is_dir():
        raise TokenizerError(f"{path}: not a tokenizer.json file or a tokenizer directory")
    try:
        from transformers import AutoTokenizer
    except ImportError as e:
        raise TokenizerError(f"{path}: needs the `tokenizers` or `transformers` package") from e
    try:
        return AutoTokenizer.from_pretrained(str(path), local_files_only=True)
    except Exception as e:
        raise TokenizerError(f"{path}: {e}") from e
