"""Prompts from the model's own tokenizer: deterministic, exact lengths, a tail token unlike the warm prompt's."""

from __future__ import annotations

from pathlib import Path

import pytest

from eval.canary.prompts import PromptBook, local_tokenizer
from eval.models.tiny_nemotron_h import generate


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return generate(tmp_path_factory.mktemp("models"), 0, {})


def test_same_seed_same_ids_exact_length(model_dir: Path) -> None:
    tok = local_tokenizer(model_dir)
    assert tok is not None
    a, b = PromptBook(tok, 0), PromptBook(tok, 0)
    assert a.ids("warm-0", 160) == b.ids("warm-0", 160)
    assert len(a.ids("warm-0", 160)) == 160 and len(a.ids("long", 700)) == 700
    assert a.ids("warm-0", 160) != a.ids("warm-1", 160)
    assert PromptBook(tok, 1).ids("warm-0", 160) != a.ids("warm-0", 160)


def test_ids_are_ordinary_tokens(model_dir: Path) -> None:
    tok = local_tokenizer(model_dir)
    assert tok is not None
    ids = PromptBook(tok, 0).ids("x", 500)
    assert min(ids) >= 5  # ids 0-4 are the special tokens (pad, bos, eos, im_start, im_end)


def test_tail_token_differs(model_dir: Path) -> None:
    tok = local_tokenizer(model_dir)
    assert tok is not None
    book = PromptBook(tok, 0)
    first = book.ids("tail", 1)[0]
    assert book.tail_token("tail", avoid=first) != first


def test_no_tokenizer_file(tmp_path: Path) -> None:
    assert local_tokenizer(tmp_path) is None
