"""Two rules of ``sentencepiece``'s Unigram search (0.2.3, ``Model::EncodeOptimized``) that only
some texts reach, checked live against ``sentencepiece`` on both backends:

* a USER_DEFINED piece is found by the search, scoring ``0.1 x (its bytes - 1)``, so it loses
  where the pieces around it score better together, and of two overlapping ones the longer
  (or the pair whose scores add up higher) wins;
* past a path score of ±100,000 the float32 sums are rebased, which decides near-ties on texts
  of tens of thousands of tokens; below it, the sums' rounding decides closer ties.
"""

from __future__ import annotations

import functools
import gzip
import random
import struct

import pytest
import sentencepiece
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import DATA
from wordsplit import TokenizerOptions
from wordsplit.formats.sentencepiece import read_model_proto, sentencepiece_vocab

UNIGRAM = DATA / "unigram"
USER_DEFINED = 4  # ModelProto.SentencePiece.Type
BACKENDS = ["python", "native"]


def model_bytes(name: str, user_defined: tuple[str, ...] = ()) -> bytes:
    """A real model's bytes, with ``user_defined`` added as USER_DEFINED pieces (or made so)."""
    from sentencepiece import sentencepiece_model_pb2

    proto = sentencepiece_model_pb2.ModelProto()
    proto.ParseFromString(gzip.decompress((UNIGRAM / name).read_bytes()))
    existing = {p.piece: p for p in proto.pieces}
    for text in user_defined:
        piece = existing.get(text) or proto.pieces.add()
        piece.piece, piece.type, piece.score = text, USER_DEFINED, 0.0
    return proto.SerializeToString()


@functools.cache
def pair(name: str, user_defined: tuple[str, ...], backend: str):
    data = model_bytes(name, user_defined)
    oracle = sentencepiece.SentencePieceProcessor(model_proto=data)
    vocab = sentencepiece_vocab(read_model_proto(data), name=f"{name}+user-defined")
    return oracle, TokenizerOptions(backend=backend).build(vocab)


# Pieces that overlap one another and the model's own; digits and signs, which the model's
# character map changes in no combination (a letter may compose with a mark that follows it,
# and such user-defined pieces are refused).
PIECES = ("12", "123", "234", "--", "-+-", "[#]", "!!")
WORDS = st.sampled_from(["12", "123", "234", "1234", "1", "2", "3", "4", "-", "--", "-+-", "+", "[#]", "[", "#]",
                         "!", "!!", " ", "the", "x", "é", "1999"])


@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=150, deadline=None)
@given(text=st.lists(WORDS, max_size=12).map("".join))
def test_user_defined_pieces_are_found_by_the_search(backend, text):
    oracle, tok = pair("test_sentencepiece.model.gz", PIECES, backend)
    assert tok.encode_ordinary(text) == oracle.encode(text), text


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_user_defined_piece_loses_to_better_pieces_around_it(backend):
    oracle, tok = pair("test_sentencepiece.model.gz", PIECES, backend)
    # "1234": "123" + "4" (0.2 and a log probability) loses to "1" + "234" (the same two
    # kinds): the longest user-defined piece at the left is not what the search takes.
    assert [oracle.id_to_piece(i) for i in oracle.encode("1234")] == ["▁", "1", "234"]
    for text in ("1234", "123", "-+-", "12 1234 -+-!!", "[#]1234"):
        assert tok.encode_ordinary(text) == oracle.encode(text), text


def long_text(seed: int, words: int) -> str:
    rng = random.Random(seed)
    vocabulary = ["the", "of", "and", "tokenizer", "models", "a", "in", "x", "é", "日本", "ab", "1999", ",", "."]
    return " ".join(rng.choice(vocabulary) for _ in range(words))


@functools.cache
def near_tie_model(below: float = 0.02) -> bytes:
    """test_sentencepiece.model with "▁and" scoring ``below`` under "▁" + "and". At 0.02,
    float32 sums of 100,000 and more (steps of 0.0078 to 0.06) round the two paths to one
    score, where the first found ("▁and") stays; rebased sums keep "▁" + "and" ahead."""
    from sentencepiece import sentencepiece_model_pb2

    proto = sentencepiece_model_pb2.ModelProto()
    proto.ParseFromString(gzip.decompress((UNIGRAM / "test_sentencepiece.model.gz").read_bytes()))
    index = {p.piece: p for p in proto.pieces}
    whole, space, rest = index["▁and"], index["▁"], index["and"]
    whole.score = struct.unpack("<f", struct.pack("<f", space.score + rest.score - below))[0]
    return proto.SerializeToString()


@pytest.mark.parametrize("backend", BACKENDS)
def test_long_texts_rebase_their_sums_as_sentencepiece(backend):
    data = near_tie_model()
    oracle = sentencepiece.SentencePieceProcessor(model_proto=data)
    tok = TokenizerOptions(backend=backend).build(sentencepiece_vocab(read_model_proto(data), name="near-tie"))
    text = long_text(0, 40_000)  # about 150 KB: path scores pass -100,000 several times
    expected = oracle.encode(text)
    assert oracle.piece_to_id("▁and") not in expected  # (so a sum that ties would show)
    assert tok.encode_ordinary(text) == expected


def test_near_ties_that_rounding_decides_are_decided_as_sentencepiece():
    """At 0.004 apart, "▁and" and "▁" + "and" swap as the sums grow (steps of 0.002 to 0.0078
    between 25,000 and 100,000): a word's best path depends on the text before it, so no
    search may reuse a word's path without its margins (the native one searches the whole
    text), and each place gets sentencepiece's choice."""
    data = near_tie_model(0.004)
    oracle = sentencepiece.SentencePieceProcessor(model_proto=data)
    tok = TokenizerOptions(backend="native").build(sentencepiece_vocab(read_model_proto(data), name="near-tie"))
    text = long_text(0, 40_000)
    expected = oracle.encode(text)
    assert oracle.piece_to_id("▁and") in expected and oracle.piece_to_id("and") in expected
    assert tok.encode_ordinary(text) == expected
    assert tok.encode_ordinary(text) == expected  # (a second call: nothing kept from the first decides)


# User-defined pieces that the character map (nmt_nfkc) would change, or reach into from the
# character before them: sentencepiece's normalizer copies them whole.
MAPPED = ("<ﬁ>", "ﬁ", "①", "e", "ing", "Ａ")
MAPPED_WORDS = st.sampled_from(["<ﬁ>", "ﬁ", "①", "e", "\u0301", "ing", "Ａ", "ＡＢ", "<", ">", " ", "x", "é", "ｶﾞ",
                                "fi"])
MAPPED_MODELS = ["test_sentencepiece.model.gz", "test_sentencepiece_bpe.model.gz"]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", MAPPED_MODELS)
@settings(max_examples=120, deadline=None)
@given(text=st.lists(MAPPED_WORDS, max_size=10).map("".join))
def test_user_defined_pieces_are_copied_by_the_normalizer(backend, name, text):
    oracle, tok = pair(name, MAPPED, backend)
    assert tok.encode_ordinary(text) == oracle.encode(text), text
    assert tok.decode(tok.encode_ordinary(text)) == oracle.decode(oracle.encode(text))


@pytest.mark.parametrize("name", MAPPED_MODELS)
def test_a_mark_after_a_user_defined_piece_stays_apart(name):
    oracle, tok = pair(name, MAPPED, "python")
    # "e" + U+0301 composes to "é" under the map, but "e" is user-defined: it stays "e".
    pieces = [oracle.id_to_piece(i) for i in oracle.encode("e\u0301")]
    assert "e" in pieces
    assert tok.encode_ordinary("e\u0301") == oracle.encode("e\u0301")
