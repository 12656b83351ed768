"""HF's BPE over characters (:class:`~wordsplit.spec.CharacterBpe`: CLIP's ``</w>`` suffix, a
``continuing_subword_prefix``, the unknown token with and without ``fuse_unk``, bytes as symbols
after a ByteLevel pre-tokenizer): the core's ``character-bpe`` encoder against the Python one
and both against HF ``tokenizers`` 0.23 live, on hypothesis' vocabularies, settings and words
and on every such file of tests/data (tests/test_wordpiece.py runs the files' corpus lines,
offsets and goldens on both backends); the reader's refusals of what HF fails on."""

from __future__ import annotations

import gzip
import json
from functools import lru_cache
from pathlib import Path

import pytest
import tokenizers
from hypothesis import given, settings
from hypothesis import strategies as st

from wordsplit import TokenizerOptions, load_vocab
from wordsplit.core import extension
from wordsplit.engines.native import native_normalizer
from wordsplit.errors import EncodeInputError, UnsupportedTokenizerError, VocabFormatError
from wordsplit.formats.bytelevel import token_text
from wordsplit.formats.hf import read_hf_tokenizer_json
from wordsplit.spec import CharacterBpe

native = extension()
pytestmark = pytest.mark.skipif(native is None, reason="the native core is not built")

DATA = Path(__file__).parent / "data"
# Every tokenizer.json of tests/data whose model is a CharacterBpe.
FILES = sorted(path for path in DATA.rglob("tokenizer.json*")
               if isinstance(load_vocab(path).pipeline.model, CharacterBpe))
BACKENDS = ("python", "native")


def _text(path: Path) -> str:
    data = path.read_bytes()
    return (gzip.decompress(data) if path.suffix == ".gz" else data).decode("utf-8")


def test_the_files_are_the_three_known_ones_and_run_natively():
    assert {path.parent.name for path in FILES} >= {"clip-vit-base-patch32", "tokenizer-wiki", "tortoise"}
    for path in FILES:
        vocab = load_vocab(path)
        tok = TokenizerOptions().build(vocab)
        assert tok._engine.native, path
        assert native_normalizer(vocab.normalizer), path
        assert TokenizerOptions(backend="python").build(vocab)._engine.native is False


@lru_cache(maxsize=None)
def _file_tokenizers(path: Path):
    hf = tokenizers.Tokenizer.from_str(_text(path))
    hf.no_padding()
    hf.no_truncation()
    return hf, *(TokenizerOptions(backend=backend).build(load_vocab(path)) for backend in BACKENDS)


# What the files' stages decide: case and accents (CLIP lowercases after NFC), white space of
# every kind (CLIP's Replace of \s+), letters, digits and other symbols in runs, characters no
# token spells (the unknown token), the special tokens' text.
ALPHABET = st.sampled_from(list(
    "aAzZ lowéÉe\u0301İΣ中文한あ0123456789٣.,!?'\"-_#@\t\n\r\u3000\xa0\u2028\x85\u200b\U0001f980\x00ﬁⅫ"
)) | st.sampled_from(["<|endoftext|>", "<|startoftext|>", "[UNK]", "'s", "'ll", "</w>"]) \
    | st.characters(exclude_categories=("Cs",))


@pytest.mark.parametrize("path", FILES, ids=lambda path: path.parent.name)
@settings(max_examples=150, deadline=None)
@given(text=st.lists(ALPHABET, max_size=40).map("".join))
def test_hypothesis_texts_are_hfs_on_both_backends(path, text):
    hf, python, native_tok = _file_tokenizers(path)
    expected = hf.encode(text, add_special_tokens=False).ids
    assert python.encode(text, allowed_special="all") == expected
    assert native_tok.encode(text, allowed_special="all") == expected


# -- random vocabularies ------------------------------------------------------------------------

# Characters of one, two, three and four bytes, and one ("x") that no token is made of.
CHARS = "abcé中😀"


@st.composite
def models(draw):
    """A tokenizer.json of HF's BPE over random tokens and merges of ``CHARS``, with random
    options: the unknown token (none, one of the vocab's, one it lacks), ``fuse_unk``, the
    suffix, the prefix, and bytes as symbols (a ByteLevel pre-tokenizer)."""
    byte_level = draw(st.booleans())
    prefix = draw(st.sampled_from(["", "##", "@"]))
    # (a byte-level file with neither is plain byte-level BPE, another model)
    suffix = draw(st.sampled_from(["</w>", "_"] if byte_level and not prefix else ["", "</w>", "_"]))
    unk = draw(st.sampled_from([None, "[UNK]", "<missing>"]))
    units = sorted({bytes([b]) for c in CHARS for b in c.encode()}) if byte_level else [c.encode() for c in CHARS]
    # Each unit spelled the four ways a symbol can be, some of them left out.
    spelled = [p + u + s for u in units for p in (b"", prefix.encode()) for s in (b"", suffix.encode())]
    tokens = list(dict.fromkeys(t for t in spelled if draw(st.integers(0, 9)) < 8))
    merges = []
    cut = len(prefix.encode())
    for _ in range(draw(st.integers(0, 40))):
        left = draw(st.sampled_from(tokens))
        right = draw(st.sampled_from(tokens))
        if len(right) < cut or (byte_level and not right.startswith(prefix.encode())):
            continue
        made = left + right[cut:]
        if not byte_level:
            try:
                made.decode("utf-8")
                right[cut:].decode("utf-8")
            except UnicodeDecodeError:
                continue  # (HF fails to load a merge that cuts a character)
        if made not in tokens:
            tokens.append(made)
        merges.append((left, right))
    spell = token_text if byte_level else (lambda data: data.decode("utf-8"))
    vocab = {spell(token): i for i, token in enumerate(tokens)}
    if unk == "[UNK]":
        vocab["[UNK]"] = len(vocab)
    pre_tokenizer = {"type": "WhitespaceSplit"}
    if byte_level:
        pre_tokenizer = {"type": "Sequence", "pretokenizers": [
            pre_tokenizer, {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False,
                            "use_regex": False}]}
    return {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
        "pre_tokenizer": pre_tokenizer, "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}
        if byte_level else None,
        "model": {"type": "BPE", "dropout": None, "unk_token": unk, "continuing_subword_prefix": prefix or None,
                  "end_of_word_suffix": suffix or None, "fuse_unk": draw(st.booleans()), "byte_fallback": False,
                  "ignore_merges": False, "vocab": vocab,
                  "merges": [[spell(left), spell(right)] for left, right in merges]},
    }


WORDS = st.lists(st.sampled_from(list(CHARS + "x ")), max_size=30).map("".join)


def _hf_ids(hf, text):
    try:
        return hf.encode(text, add_special_tokens=False).ids
    except Exception as exc:  # HF's error of a piece that needs an unknown token it lacks
        assert "not found in the vocabulary" in str(exc) or "Unk token" in str(exc), exc
        return EncodeInputError


def _ids(tok, text):
    try:
        return tok.encode(text)
    except EncodeInputError:
        return EncodeInputError


@settings(max_examples=300, deadline=None)
@given(spec=models(), texts=st.lists(WORDS, min_size=1, max_size=8))
def test_random_vocabularies_are_hfs_on_both_backends(spec, texts):
    text = json.dumps(spec)
    hf = tokenizers.Tokenizer.from_str(text)
    vocab = read_hf_tokenizer_json(text.encode(), source="random.json")
    model = vocab.pipeline.model
    assert isinstance(model, CharacterBpe)
    assert model.continuing_subword_prefix == (spec["model"]["continuing_subword_prefix"] or "")
    python, native_tok = (TokenizerOptions(backend=backend).build(vocab) for backend in BACKENDS)
    assert native_tok._engine.native
    for words in texts:
        expected = _hf_ids(hf, words)
        assert _ids(python, words) == expected, words
        assert _ids(native_tok, words) == expected, words
        if expected is not EncodeInputError:
            # HF's offsets, also where a character is dropped (HF adds up the kept symbols'
            # lengths, so the tokens after it are placed that much earlier).
            offsets = hf.encode(words, add_special_tokens=False).offsets
            for tok in (python, native_tok):
                assert tok.encode_with_offsets(words, allowed_special="all").char_offsets == offsets, words


def test_a_pair_listed_twice_keeps_its_last_rank_as_in_hf():
    spec = {"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "c": 2, "ab": 3, "bc": 4}, "unk_token": None,
                      "merges": ["b c", "a b", "b c"]}, "pre_tokenizer": {"type": "Whitespace"}}
    text = json.dumps(spec)
    expected = tokenizers.Tokenizer.from_str(text).encode("abc").ids
    assert expected == [3, 2]
    vocab = read_hf_tokenizer_json(text.encode(), source="t.json")
    for backend in BACKENDS:
        assert TokenizerOptions(backend=backend).build(vocab).encode("abc") == expected


def _refused(model: dict, pre_tokenizer=None):
    spec = {"model": {"type": "BPE", "unk_token": None, **model},
            "pre_tokenizer": pre_tokenizer or {"type": "Whitespace"}}
    return read_hf_tokenizer_json(json.dumps(spec).encode(), source="t.json")


@pytest.mark.parametrize("model, error, match", [
    # HF panics loading these: the right token is shorter than the prefix, or cut inside a character.
    ({"vocab": {"a": 0, "b": 1}, "merges": ["a b"], "continuing_subword_prefix": "##"}, VocabFormatError,
     "shorter than the continuing_subword_prefix"),
    ({"vocab": {"a": 0, "#é": 1, "a\x00": 2}, "merges": ["a #é"], "continuing_subword_prefix": "##"},
     VocabFormatError, "inside a character"),
    ({"vocab": {"a": 0, "##b": 1, "a##b": 2}, "merges": ["a ##b"], "continuing_subword_prefix": "##"},
     VocabFormatError, "makes 'ab'"),
    ({"vocab": {"a": 0}, "merges": [], "unk_token": ""}, UnsupportedTokenizerError, 'unk_token ""'),
    ({"vocab": {"a": 0}, "merges": [], "ignore_merges": True}, UnsupportedTokenizerError, "ignore_merges"),
    ({"vocab": {"a": 0}, "merges": [], "continuing_subword_prefix": 2}, VocabFormatError, "string or null"),
])
def test_what_hf_fails_on_or_wordsplit_does_not_run_is_refused(model, error, match):
    with pytest.raises(error, match=match):
        _refused(model)


def test_a_byte_level_prefix_beyond_printable_ascii_is_refused():
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "use_regex": True}
    assert _refused({"vocab": {"a": 0, "##b": 1}, "merges": [], "continuing_subword_prefix": "##"},
                    byte_level).pipeline.model.byte_level
    with pytest.raises(UnsupportedTokenizerError, match="printable ASCII"):
        _refused({"vocab": {"a": 0}, "merges": [], "continuing_subword_prefix": "Ġ"}, byte_level)


def test_a_vocab_with_the_prefix_pickles_and_checks_its_merges():
    import pickle

    vocab = _refused({"vocab": {"a": 0, "##b": 1, "ab": 2}, "merges": ["a ##b"], "continuing_subword_prefix": "##"})
    again = pickle.loads(pickle.dumps(vocab))
    assert again.merges == vocab.merges == {(0, 1): 0}
    for backend in BACKENDS:
        assert TokenizerOptions(backend=backend).build(again).encode("ab b") == [2]


@pytest.mark.parametrize("encoder", ["heap-merge", "buffer-sweep", "backtrack"])
def test_a_byte_level_encoder_is_refused_naming_the_model_and_its_encoder(encoder):
    clip = DATA / "wordpiece" / "clip-vit-base-patch32" / "tokenizer.json.gz"
    for backend in BACKENDS:
        with pytest.raises(UnsupportedTokenizerError) as caught:
            TokenizerOptions(encoder=encoder, backend=backend).build(load_vocab(clip))
        message = str(caught.value)
        assert "a CharacterBpe model (HF's BPE over each piece's bytes, with the end-of-word suffix '</w>')" in message
        assert "which the 'character-bpe' encoder runs" in message
        assert "piece score" not in message
