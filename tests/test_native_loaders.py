"""The native fast paths of the SentencePiece-family loaders against their Python references:
the GGUF head walk and metadata, gemma4 merge resolution, a ``.model``'s pieces and tables,
score merges, and pair-ranked merges kept packed in a Vocab. Each gives the reference's
Vocab, or (where the reference refuses the input) lets the reference raise its error."""

from __future__ import annotations

import contextlib
import functools
import pickle
import struct
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sentencepiece import sentencepiece_model_pb2

import wordsplit.formats.native as native_readers
import wordsplit.vocab as vocab_module
from conftest import damaged
from llamacpp_cases import unpacked
from wordsplit.errors import UnsupportedTokenizerError, VocabFormatError
from wordsplit.formats.gguf import read_gguf, read_gguf_head, read_gguf_metadata
from wordsplit.formats.sentencepiece import load_sentencepiece
from wordsplit.core import extension
from wordsplit.vocab import Vocab, pack_merges

pytestmark = pytest.mark.skipif(extension() is None, reason="needs the native core")

SPM_DIR = Path(__file__).parent / "data" / "spm"
UNPACKED = Path(tempfile.mkdtemp(prefix="wordsplit-native-loaders-"))
ERRORS = (VocabFormatError, UnsupportedTokenizerError)


@contextlib.contextmanager
def reference_only():
    """The loaders without their native fast paths (the Vocab keeps its native tables)."""
    saved = native_readers.extension
    native_readers.extension = lambda: None
    try:
        yield
    finally:
        native_readers.extension = saved


def outcome(load):
    """What ``load()`` gives: the Vocab's fields, or the error's type and message."""
    try:
        vocab = load()
    except ERRORS as exc:
        return type(exc).__name__, str(exc)
    merges = None if vocab.merges is None else list(vocab.merges.items())
    return (vocab.content_hash, merges, dict(vocab.ranks), dict(vocab.special_tokens), dict(vocab.added_tokens),
            dict(vocab.literal_flags), vocab.pipeline, vocab.n_vocab, vocab.unk_token_id,
            vocab.bos_token_id, vocab.eos_token_id)


def same_with_and_without_native(load):
    fast = outcome(load)
    with reference_only():
        assert fast == outcome(load)
    return fast


@functools.lru_cache(maxsize=None)
def gguf_file(name: str) -> bytes:
    return unpacked(f"ggml-vocab-{name}.gguf.xz", UNPACKED).read_bytes()


# -- GGUF --------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["llama-spm", "phi-3", "gemma-4"])
def test_gguf_files_read_as_the_reference_reads_them(name):
    data = gguf_file(name)
    fast = same_with_and_without_native(lambda: read_gguf(data, source=name))
    assert isinstance(fast[0], str)  # a Vocab, not an error
    metadata = read_gguf_metadata(data)
    with reference_only():
        assert metadata == read_gguf_metadata(data)


def _string(s: bytes) -> bytes:
    return struct.pack("<Q", len(s)) + s


def _gemma4(tokens: list[str], merges: list[str], types: list[int] | None = None) -> bytes:
    """A gemma4 GGUF: the 256 byte tokens, then ``tokens``, and ``merges``."""
    texts = [f"<0x{b:02X}>" for b in range(256)] + ["<pad>", "<eos>", *tokens]
    kinds = [6] * 256 + [3, 3] + (types or [1] * len(tokens))
    pairs = [
        _string(b"tokenizer.ggml.model") + struct.pack("<I", 8) + _string(b"gemma4"),
        _string(b"tokenizer.ggml.tokens") + struct.pack("<IIQ", 9, 8, len(texts))
        + b"".join(_string(t.encode()) for t in texts),
        _string(b"tokenizer.ggml.token_type") + struct.pack("<IIQ", 9, 5, len(kinds))
        + struct.pack(f"<{len(kinds)}i", *kinds),
        _string(b"tokenizer.ggml.merges") + struct.pack("<IIQ", 9, 8, len(merges))
        + b"".join(_string(m.encode()) for m in merges),
    ]
    return b"GGUF" + struct.pack("<IQQ", 3, 0, len(pairs)) + b"".join(pairs)


GEMMA4_TOKENS = ["a", "b", "ab", "abb", "\n", "\n\n", "\u2581", "\u2581a", "x\u2581"]


@pytest.mark.parametrize("merges", [
    ["a b", "ab b", "\n \n", "\u2581 a"],  # sound
    ["a b", "a b", "ab b"],  # a repeated pair keeps its first rank
    ["ab"],  # no space
    ["", "a b"],
    ["a <0x41>"],  # a byte token
    ["a \n"],  # a newline joined to text
    ["b a"],  # makes no token
    ["a c"],  # a token not in the vocabulary
    ["<pad> a"],
    ["\u2581 b"],
])
def test_gemma4_merges_resolve_or_fail_as_the_reference(merges):
    data = _gemma4(GEMMA4_TOKENS, merges)
    same_with_and_without_native(lambda: read_gguf(data, source="g4"))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(GEMMA4_TOKENS + ["<0x41>", "c", "<eos>"]),
                          st.sampled_from(GEMMA4_TOKENS + ["<0x0A>", " ", ""])).map(lambda p: f"{p[0]} {p[1]}"),
                max_size=8))
def test_gemma4_merges_of_any_pairs_resolve_or_fail_as_the_reference(merges):
    data = _gemma4(GEMMA4_TOKENS, merges)
    same_with_and_without_native(lambda: read_gguf(data, source="g4"))


TINY = _gemma4(GEMMA4_TOKENS, ["a b", "ab b", "\n \n"])


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(0, len(TINY) - 1), st.sampled_from(["set", "insert", "delete"]),
                          st.binary(min_size=1, max_size=8)), min_size=1, max_size=3))
def test_damaged_gguf_metadata_reads_or_fails_as_the_reference(edits):
    data = damaged(TINY, edits)
    native = extension().gguf_metadata(data)
    try:
        with reference_only():
            reference = read_gguf_metadata(data)
    except VocabFormatError:
        assert native is None
    else:
        assert native is None or native == reference
    same_with_and_without_native(lambda: read_gguf(data, source="damaged"))


@pytest.mark.parametrize("cut", [0, 3, 20, 30, 200, 2000, len(TINY) - 1, len(TINY), None])
def test_the_head_walk_reads_the_bytes_the_reference_reads(tmp_path, cut):
    path = tmp_path / "f.gguf"
    path.write_bytes(TINY[:cut] + (b"tensor data" * 100 if cut is None else b""))
    fast = read_gguf_head(path)
    with reference_only():
        assert fast == read_gguf_head(path)
    assert fast == (TINY if cut is None else TINY[:cut])


# -- SentencePiece .model ----------------------------------------------------------------------


@pytest.mark.parametrize("name", ["mistral-v1.model", "mistral-v7.model"])
def test_model_files_read_as_the_reference_reads_them(name):
    fast = same_with_and_without_native(lambda: load_sentencepiece(SPM_DIR / name))
    assert isinstance(fast[0], str)


def _model(pieces, *, model_type=2, byte_fallback=True) -> bytes:
    proto = sentencepiece_model_pb2.ModelProto()
    proto.trainer_spec.model_type = model_type
    proto.trainer_spec.byte_fallback = byte_fallback
    proto.normalizer_spec.name = "identity"
    for text, score, kind in pieces:
        piece = proto.pieces.add()
        piece.piece, piece.score, piece.type = text, score, kind
    return proto.SerializeToString()


BYTE_PIECES = [(f"<0x{b:02X}>", 0.0, 6) for b in range(256)]
PIECE = st.tuples(st.text("ab\u2581\u00e9", min_size=1, max_size=3),
                  st.sampled_from([0.0, -0.0, -1.0, -2.0, -2.5, float("nan")]), st.sampled_from([1, 1, 1, 4, 5]))


@settings(max_examples=80, deadline=None)
@given(pieces=st.lists(PIECE, max_size=12), drop_byte=st.booleans(), unknowns=st.integers(0, 2),
       model_type=st.sampled_from([1, 2, 2, 2]))
def test_models_of_any_pieces_read_or_fail_as_the_reference(tmp_path_factory, pieces, drop_byte, unknowns,
                                                            model_type):
    path = tmp_path_factory.mktemp("m") / "any.model"
    letters = [(c, -9.0, 1) for c in "ab\u2581\u00e9"]
    specials = [("<unk>", 0.0, 2)] * unknowns + [("<s>", 0.0, 3)]
    path.write_bytes(_model(specials + BYTE_PIECES[drop_byte:] + letters + pieces, model_type=model_type))
    same_with_and_without_native(lambda: load_sentencepiece(path))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5000), st.sampled_from(["set", "insert", "delete"]),
                          st.binary(min_size=1, max_size=6)), min_size=1, max_size=3))
def test_damaged_models_read_or_fail_as_the_reference(tmp_path_factory, edits):
    data = _model([("<unk>", 0.0, 2)] + BYTE_PIECES + [("a", 0.0, 1), ("b", 0.0, 1), ("ab", -1.0, 1)])
    path = tmp_path_factory.mktemp("m") / "damaged.model"
    path.write_bytes(damaged(data, edits))
    same_with_and_without_native(lambda: load_sentencepiece(path))


# -- packed merges in a Vocab ------------------------------------------------------------------


def _tiny_vocab(**fields) -> Vocab:
    ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256, b"abc": 257}
    return Vocab(name="tiny", ranks=ranks, pattern=".", **fields)


def test_packed_merges_are_the_dict_of_merges():
    merges = {(97, 98): 0, (256, 99): 1}
    packed = _tiny_vocab(merges=pack_merges(merges))
    plain = _tiny_vocab(merges=merges)
    assert packed.merges == plain.merges and packed.pair_ranked
    assert packed.content_hash == plain.content_hash
    assert pickle.loads(pickle.dumps(packed)).merges == plain.merges
    assert not _tiny_vocab().pair_ranked and _tiny_vocab().packed_merges() is None


@pytest.mark.parametrize("bad", [{(97, 300): 0}, {(97, 99): 3}, {(97, 98): 0, (98, 97): 5}])
def test_a_bad_packed_merge_gets_the_message_of_a_bad_merge(bad, monkeypatch):
    with pytest.raises(VocabFormatError) as plain:
        _tiny_vocab(merges=bad)
    with pytest.raises(VocabFormatError) as packed:
        _tiny_vocab(merges=pack_merges(bad))
    assert str(packed.value) == str(plain.value)
    monkeypatch.setattr(vocab_module, "extension", lambda: None)
    with pytest.raises(VocabFormatError) as python:
        _tiny_vocab(merges=pack_merges(bad))
    assert str(python.value) == str(plain.value)


def test_packed_merges_without_the_native_core(monkeypatch):
    monkeypatch.setattr(vocab_module, "extension", lambda: None)
    vocab = _tiny_vocab(merges=pack_merges({(97, 98): 0}))
    assert vocab.merges == {(97, 98): 0}
    with pytest.raises(VocabFormatError, match="uint32 triples"):
        _tiny_vocab(merges=b"\x00" * 13)


def test_packed_strings_read_as_a_list():
    data = _gemma4(GEMMA4_TOKENS, ["a b"])
    packed = extension().gguf_metadata(data, ["tokenizer.ggml.tokens"])["tokenizer.ggml.tokens"]
    listed = read_gguf_metadata(data)["tokenizer.ggml.tokens"]
    assert len(packed) == len(listed) and list(packed) == listed == packed.tolist()
    assert packed[-1] == listed[-1] and packed[0] == listed[0]
    with pytest.raises(IndexError):
        packed[len(listed)]
