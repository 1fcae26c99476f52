"""What every generated model shares: option parsing, the ChatML tokenizer's config files and the atomic build.

The generators (`tiny_nemotron_h`, `tiny_llama`, `organism`) differ in architecture and weights; what a model
directory needs besides them (tokenizer_config.json, special_tokens_map.json, chat_template.jinja) and how it
appears in the cache (built in a `.tmp` sibling, a marker file written last, then renamed) is the same.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import fields
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

SPECIAL = {"bos_token": "<s>", "eos_token": "<|im_end|>", "pad_token": "<pad>"}


def from_options(cls: type[T], kind: str, options: dict[str, Any]) -> T:
    """`cls(**options)` for a generator's options dataclass; an unknown option names the known ones."""
    known = {f.name for f in fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(options) - known)
    if unknown:
        raise ValueError(f"unknown {kind} option(s) {unknown} (known: {', '.join(sorted(known))})")
    return cls(**options)


def write_tokenizer_files(d: Path, template: str, max_length: int) -> None:
    """The tokenizer's config files beside its tokenizer.json (ChatML specials, no BOS/EOS added, `template`)."""
    config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "model_max_length": max_length,
        **SPECIAL,
        "unk_token": None,
        "add_bos_token": False,
        "add_eos_token": False,
        "clean_up_tokenization_spaces": False,
        "chat_template": template,
    }
    (d / "tokenizer_config.json").write_text(json.dumps(config, indent=2) + "\n")
    (d / "special_tokens_map.json").write_text(json.dumps(SPECIAL, indent=2) + "\n")
    (d / "chat_template.jinja").write_text(template, encoding="utf-8")


def build_once(target: Path, marker: str, write: Callable[[Path], dict[str, Any]]) -> Path:
    """`target` if its `marker` exists; else `write` fills a fresh `.tmp` sibling, whose returned dict becomes the
    marker (written last), and the sibling is renamed into place: a crash never leaves a half-built model."""
    if (target / marker).is_file():
        return target
    tmp = target.with_name(target.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    record = write(tmp)
    (tmp / marker).write_text(json.dumps(record, indent=2) + "\n")
    shutil.rmtree(target, ignore_errors=True)
    tmp.rename(target)
    return target
