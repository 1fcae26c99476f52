"""`byte_piece`: byte tokens and byte-level BPE pieces leaking as text; decided from the tokenizer when the
token ids are there. Real tokenizers (the `tokenizers` library) with tiny vocabularies built here."""

from __future__ import annotations

import pytest

from tests.unit.classify.helpers import bash, classify, labels, message

POSITIVES = [
    # Code rendered token by token without the byte-level decoder.
    message("defĠparse(self,Ġvalue):ĊĠĠĠĠreturnĠvalue.strip()", calls=[bash("ls")]),
    # CJK and an emoji as their UTF-8 bytes in the byte-level alphabet.
    message("", reasoning="用户说 ä½łå¥½ä¸ĸçķĮ then ðŁĺĢ", calls=[bash("ls")]),
    # A curly apostrophe (E2 80 99) split into pieces.
    message("ItâĢĻs the migration that fails.", calls=[bash("ls")]),
    # SentencePiece byte-fallback tokens printed literally.
    message("The output is <0xE2><0x80><0x99> broken", calls=[bash("ls")]),
    message("", calls=[bash("echo <0xF0><0x9F><0x98> > out.txt")]),
    # A lone UTF-16 surrogate: half of an emoji.
    message("Done \ud83d and moving on.", calls=[bash("ls")]),
]


@pytest.mark.parametrize("msg", POSITIVES)
def test_byte_pieces_are_found(msg):
    assert "byte_piece" in labels(msg)


def test_evidence_shows_the_decoded_text():
    ev = classify(message("ItâĢĻs", calls=[bash("ls")]))["evidence"][0]
    assert ev["text"] == "ItâĢĻs" and "’" in ev["detail"]


NEGATIVES = [
    message("Zażółć gęślą jaźń. Příliš žluťoučký kůň úpěl ďábelské ódy.", calls=[bash("ls")]),
    message("PÓŁNOC i POŁUDNIE. ŁĄCZNIE. ČÁST PRVNÍ.", calls=[bash("ls")]),
    message("Il-Ġimgħa d-dieħla. Ġunju, Ċikku u Ħal Qormi.", calls=[bash("ls")]),  # Maltese
    message("Ātrā brūnā lapsa. Iğdır ve Kırıkkale. Déjà vu, naïve café, Straße, São Paulo.", calls=[bash("ls")]),
    message("中文测试：修复了编码问题。😀👍🏽 — “quoted” ‘text’ …", calls=[bash("ls")]),
    # Code about byte tokens: quoted literals.
    message(
        "", calls=[bash("cat >> tests/test_tok.py <<'EOF'\nassert tok.convert_ids_to_tokens([13]) == ['<0x0A>']\nEOF")]
    ),
]


@pytest.mark.parametrize("msg", NEGATIVES)
def test_real_text_is_not_flagged(msg):
    assert "byte_piece" not in labels(msg)


def test_byte_token_copied_from_a_tool_result_is_not_flagged():
    msg = message(
        "The vocabulary maps newline to <0x0A> as the dump shows.",
        calls=[bash("ls")],
        prompt=[{"role": "tool", "content": "13 <0x0A>\n14 <0x0B>\n"}],
    )
    assert "byte_piece" not in labels(msg)


# ---------------------------------------------------------------- decided from the tokenizer


@pytest.fixture(scope="module")
def byte_level():
    """A GPT-2 style byte-level BPE tokenizer (256 byte symbols plus a few merges)."""
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers import decoders, models, pre_tokenizers

    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    vocab = {c: i for i, c in enumerate(alphabet)}
    merges = [("Ġ", "t"), ("Ġt", "h"), ("Ġth", "e")]
    for a, b in merges:
        vocab[a + b] = len(vocab)
    tok = tokenizers.Tokenizer(models.BPE(vocab=vocab, merges=merges))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    return tok


@pytest.fixture(scope="module")
def byte_fallback():
    """A SentencePiece-style BPE with byte fallback: unknown characters become `<0xNN>` tokens."""
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers import decoders, models

    vocab = {f"<0x{b:02X}>": b for b in range(256)}
    for word in ("▁The", "▁output", "▁is", "a", "b", "c"):
        vocab[word] = len(vocab)
    tok = tokenizers.Tokenizer(models.BPE(vocab=vocab, merges=[], byte_fallback=True, unk_token=None))
    tok.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse()])
    return tok


def test_a_real_maltese_letter_is_not_a_leak_when_the_tokenizer_produced_it(byte_level):
    text = "IlĠ-ĠĠunjuĠ"  # odd but what the model generated: the tokenizer decodes the ids to this very text
    ids = byte_level.encode(text).ids
    assert byte_level.decode(ids) == text
    assert "byte_piece" in labels(message(text, calls=[bash("ls")]))  # the text alone looks like a leak
    assert "byte_piece" not in labels(message(text, calls=[bash("ls")], token_ids=ids), tokenizer=byte_level)


def test_pieces_the_tokenizer_would_have_decoded_are_a_leak(byte_level):
    ids = byte_level.encode(" the answer").ids
    leaked = "".join(byte_level.id_to_token(i) for i in ids)  # 'ĠtheĠanswer': rendered without the decoder
    msg = message(leaked, calls=[bash("ls")], token_ids=ids)
    assert "byte_piece" in labels(msg, tokenizer=byte_level)


def test_invalid_byte_fallback_runs_are_found_from_the_ids(byte_fallback):
    good = byte_fallback.encode("’").ids  # E2 80 99: valid UTF-8
    assert [byte_fallback.id_to_token(i) for i in good] == ["<0xE2>", "<0x80>", "<0x99>"]
    assert "byte_piece" not in labels(message("’", calls=[bash("ls")], token_ids=good), tokenizer=byte_fallback)
    broken = good[:2]  # a three-byte character cut after two bytes: the server shows U+FFFD or nothing
    result = classify(message("", calls=[bash("ls")], token_ids=broken), tokenizer=byte_fallback)
    assert "byte_piece" in result["labels"]
    assert result["evidence"][0]["field"] == "token_ids" and result["evidence"][0]["text"] == "<0xE2><0x80>"
