"""``Tokenizer.encode_with_offsets``: native == python, offsets consistent with each token's
bytes, and equal to HF tokenizers' offsets and word ids on Qwen3's tokenizer.json."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import BACKENDS, tokenizer_for
from wordsplit import TokenizerOptions, Vocab, load_vocab
from wordsplit.errors import ComponentError, DisallowedSpecialError, EncodeInputError
from wordsplit.normalizers import NORMALIZERS, nfc
from wordsplit.spec import Nfc

NAMES = ["qwen3", "cl100k_base", "gpt2", "o200k_base"]

# Pieces that stress offsets: characters split over byte tokens, NFC compositions and
# reorderings (decomposed accents, marks in non-canonical order, singletons, Hangul jamo),
# whitespace runs, and special/added literals.
PIECES = [
    "hello", " world", "  ", "\n\n", "\t", " \u3000 ", "日本語", "😀", "👩\u200d👩\u200d👧", "🦀x", "e\u0301",
    "a\u0323\u0301", "\u1e0b\u0323", "\u212b", "\u1100\u1161\u11a8", "\u0958", "\u0344", "Ω\u0301", "e\u0301\u0301",
    "123", "don't", "<|im_end|>", "<|endoftext|>", "<think>", "</think>", "<|im_start|>", "é", "ß", "İ",
    "\u0f73\u0f72", "\U00011935\U00011930", "a\u07fd\u0334",
]
texts = st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=6)), max_size=10).map("".join)


def places(result):
    return result.ids, result.byte_offsets, result.char_offsets, result.word_ids


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=texts)
def test_native_equals_python(name, text):
    python = tokenizer_for(name, backend="python").encode_with_offsets(text, allowed_special="all")
    native = tokenizer_for(name, backend="native").encode_with_offsets(text, allowed_special="all")
    assert places(native) == places(python)
    assert native.ids == tokenizer_for(name, backend="native").encode(text, allowed_special="all")


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=texts)
def test_offsets_match_each_tokens_bytes(name, backend, text):
    """Where the text is already normalized, each token's byte range holds exactly its bytes,
    the ranges tile the text, and each char range is the characters its bytes touch."""
    tok = tokenizer_for(name, backend=backend)
    if tok.vocab.normalizer == Nfc():
        text = nfc(text)
    result = tok.encode_with_offsets(text, allowed_special="all")
    data = text.encode("utf-8")
    char_of_byte = [i for i, ch in enumerate(text) for _ in ch.encode("utf-8")]
    position = 0
    for token, (start, end), (cstart, cend) in zip(result.ids, result.byte_offsets, result.char_offsets):
        assert start == position and data[start:end] == tok.decode_bytes([token])
        assert (cstart, cend) == (char_of_byte[start], char_of_byte[end - 1] + 1)
        position = end
    assert position == len(data)
    words = result.word_ids
    assert words == sorted(words) and (not words or words[0] == 0)


@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=texts)
def test_normalized_offsets_stay_in_order(backend, text):
    """Where NFC changed the text, the ranges still point into the original text."""
    result = tokenizer_for("qwen3", backend=backend).encode_with_offsets(text, allowed_special="all")
    size = len(text.encode("utf-8"))
    for (start, end), (cstart, cend) in zip(result.byte_offsets, result.char_offsets):
        assert 0 <= start <= end <= size and 0 <= cstart <= cend <= len(text)


@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=texts)
def test_qwen3_matches_hf_offsets(hf_qwen3, backend, text):
    encoding = hf_qwen3.encode(text)
    result = tokenizer_for("qwen3", backend=backend).encode_with_offsets(text, allowed_special="all")
    assert result.ids == encoding.ids
    assert result.char_offsets == encoding.offsets
    assert result.word_ids == encoding.word_ids


@pytest.mark.parametrize("backend", BACKENDS)
def test_split_character_and_composition(backend):
    # Each byte token of one character has that character's char offsets, and its own bytes.
    result = tokenizer_for("cl100k_base", backend=backend).encode_with_offsets("🦀x")
    assert result.char_offsets == [(0, 1), (0, 1), (0, 1), (1, 2)]
    assert result.byte_offsets == [(0, 2), (2, 3), (3, 4), (4, 5)]
    tok = tokenizer_for("qwen3", backend=backend)
    # NFC reorders the marks: the mark NFC moved after the composite is an inserted character,
    # aligned (as HF aligns it) to the original character before it, in bytes and chars.
    result = tok.encode_with_offsets("\u1e0b\u0323 x")
    assert result.char_offsets == [(0, 1), (1, 2), (1, 2), (2, 4)]
    assert result.byte_offsets == [(0, 3), (3, 5), (3, 5), (5, 7)]
    # "e" + U+0301 composes to "é": aligned to the "e" alone, as HF aligns it.
    result = tok.encode_with_offsets("cafe\u0301!")
    assert result.char_offsets == [(0, 2), (2, 4), (5, 6)] and result.byte_offsets == [(0, 2), (2, 4), (6, 7)]


@pytest.mark.parametrize("backend", BACKENDS)
def test_special_policy_and_literals(backend):
    tok = tokenizer_for("cl100k_base", backend=backend)
    with pytest.raises(DisallowedSpecialError):
        tok.encode_with_offsets("a<|endoftext|>")
    result = tok.encode_with_offsets("a<|endoftext|>é", allowed_special="all")
    assert result.ids == tok.encode("a<|endoftext|>é", allowed_special="all")
    assert result.byte_offsets == [(0, 1), (1, 14), (14, 16)]
    assert result.char_offsets == [(0, 1), (1, 14), (14, 15)] and result.word_ids == [0, 1, 2]
    plain = tok.encode_with_offsets("<|endoftext|>", disallowed_special=())
    assert plain.ids == tok.encode_ordinary("<|endoftext|>") and plain.char_offsets[-1][1] == 13
    with pytest.raises(EncodeInputError):
        tok.encode_with_offsets(b"bytes")


@pytest.mark.parametrize("backend", BACKENDS)
def test_surrogates_index_the_given_str(backend):
    tok = tokenizer_for("cl100k_base", backend=backend)
    text = "a\ud83d\ude00b\udc00"  # a surrogate pair (one character for encode) and a lone one
    result = tok.encode_with_offsets(text)
    assert result.ids == tok.encode(text)
    assert result.char_offsets[0] == (0, 1) and result.char_offsets[-1][1] == len(text)
    assert {cs for cs, _ in result.char_offsets} <= {0, 1, 3, 4}
    assert result.byte_offsets[-1][1] == len("a😀b\ufffd".encode())


@pytest.fixture(scope="module")
def shouting_vocab():
    """GPT-2's tokens with a plug-in normalizer that upper-cases and turns "ß" into "SS"."""
    NORMALIZERS.register("test-shout")(lambda text: text.upper())
    gpt2 = load_vocab("gpt2")
    yield Vocab(name="shout", ranks=gpt2.ranks, pattern=gpt2.pattern, special_tokens=gpt2.special_tokens,
                normalizer="test-shout")
    NORMALIZERS.remove("test-shout")


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=texts)
def test_plugin_normalizer_native_equals_python(shouting_vocab, text):
    python = TokenizerOptions(backend="python").build(shouting_vocab).encode_with_offsets(text, allowed_special="all")
    native = TokenizerOptions(backend="native").build(shouting_vocab).encode_with_offsets(text, allowed_special="all")
    assert places(native) == places(python)


@pytest.mark.parametrize("backend", BACKENDS)
def test_plugin_normalizer_alignment(shouting_vocab, backend):
    tok = TokenizerOptions(backend=backend).build(shouting_vocab)
    # "ab" → "AB" changes from the first character: every token maps to the changed middle.
    result = tok.encode_with_offsets("xx straße yy")
    assert tok.decode(result.ids) == "XX STRASSE YY"
    assert result.char_offsets[0][0] == 0 and result.char_offsets[-1][1] == 12


@pytest.mark.parametrize("backend", BACKENDS)
def test_broken_plugin_encoder_is_reported(backend):
    from wordsplit.encoders import ENCODERS

    class Wrong:
        def __init__(self, tables):
            pass

        def encode_piece(self, piece):
            return [0]  # "!" whatever the piece

    ENCODERS.register("test-wrong-offsets")(Wrong)
    try:
        tok = TokenizerOptions(encoder="test-wrong-offsets", backend=backend).build(load_vocab("gpt2"))
        with pytest.raises(ComponentError, match="do not spell the piece"):
            tok.encode_with_offsets("hello")
    finally:
        ENCODERS.remove("test-wrong-offsets")


def test_nfc_changes_match_the_normalizer():
    from wordsplit.offsets import nfc_changes

    for text in PIECES:
        assert "".join(c for c, _ in nfc_changes(text)) == nfc(text)
    assert unicodedata.normalize("NFC", "e\u0301") == "".join(c for c, _ in nfc_changes("e\u0301"))


def _lacking_vocab() -> Vocab:
    """A GPT-2-patterned vocabulary without tokens for "x" and the UTF-8 lead byte 0xC3 (as
    GPT-NeoX-family and some GGUF files lack bytes): encoding drops them before merging."""
    from wordsplit.patterns import GPT2_PATTERN

    ranks = {bytes([b]): b for b in range(256) if b not in (ord("x"), 0xC3)}
    ranks.update({b"ab": 300, b" a": 301})
    return Vocab(name="lacking", ranks=ranks, pattern=GPT2_PATTERN)


def test_offsets_skip_missing_bytes():
    # "axb" merges as "ab" across the dropped "x": the token spans all three bytes.
    for backend in BACKENDS:
        tok = TokenizerOptions(backend=backend).build(_lacking_vocab())
        r = tok.encode_with_offsets("axb x é")
        assert r.ids == tok.encode("axb x é") == [300, 32, 32, 169]
        # " x" keeps its space; " é" is 20 C3 A9, and A9 without its lead byte is a token alone,
        # which holds part of "é" and so gets the whole character as its char range.
        assert r.byte_offsets == [(0, 3), (3, 4), (5, 6), (7, 8)]
        assert r.char_offsets == [(0, 3), (3, 4), (5, 6), (6, 7)]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.text(alphabet="axb é\u00e8x\U0001f600\n", max_size=16))
def test_missing_bytes_native_equals_python(text):
    vocab = _lacking_vocab()
    native = TokenizerOptions().build(vocab).encode_with_offsets(text)
    assert native == TokenizerOptions(backend="python").build(vocab).encode_with_offsets(text)
    assert native.ids == TokenizerOptions().build(vocab).encode(text)
