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


def test_text_windows_end_where_a_text_ends(model_dir: Path) -> None:
    """`prompt_text: agent_turns`: a prompt is the last n tokens of texts drawn by key, so it ends where the model
    speaks next; the same key gives the same ids, and a window longer than one text joins several."""
    tok = local_tokenizer(model_dir)
    assert tok is not None
    texts = ["the cache block state is copied", "alpha beta gamma delta epsilon zeta eta theta"]
    ends = [tok(t) for t in texts]
    book = PromptBook(tok, 0, texts)
    for key, n in (("a", 3), ("b", 5), ("c", 40)):
        ids = book.ids(key, n)
        assert len(ids) == n
        assert any(ids[-min(n, len(e)) :] == e[-min(n, len(e)) :] for e in ends)
        assert PromptBook(tok, 0, texts).ids(key, n) == ids
    assert len({tuple(book.ids(f"k{i}", 4)) for i in range(12)}) == 2  # two texts, two possible endings


def test_agent_turn_texts_end_at_the_assistant_turn(model_dir: Path) -> None:
    from eval.canary.agent_text import agent_turn_texts

    texts = agent_turn_texts(model_dir, instances=2)
    assert len(texts) == 4  # two assistant turns per generated instance: the edit and the submit
    assert all(t.endswith("<|im_start|>assistant\n") for t in texts)
    assert "Resolve this issue" in texts[0] and "[exit code 0]" in texts[1]


def test_agent_turns_need_a_chat_template(tmp_path: Path, model_dir: Path) -> None:
    import shutil

    from eval.canary.agent_text import agent_turn_texts
    from eval.spec.errors import SpecError

    bare = tmp_path / "bare"
    shutil.copytree(model_dir, bare)
    for name in ("tokenizer_config.json", "chat_template.jinja"):
        (bare / name).unlink(missing_ok=True)
    with pytest.raises(SpecError, match="chat template"):
        agent_turn_texts(bare, instances=1)
