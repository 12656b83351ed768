"""SentencePiece BPE models as ``sentencepiece`` trains them by default: exact against
``sentencepiece`` (the test-time oracle) on both backends.

Defaults the Llama-family models turn off: a precompiled character map (``nmt_nfkc``,
``nfkc``), no byte fallback (a symbol left that is no piece is ``<unk>``, a run of them one
``<unk>``, decoded as `` ⁇ ``), ``remove_extra_whitespaces``. The files are transformers'
fixture ``test_sentencepiece_bpe.model`` and BPEmb's English model (tests/data/unigram/SOURCES.md);
their goldens are tools/gen_family_goldens.py's. The variants are edits of a real model's
protobuf: a single-character piece that longer pieces hold removed (as Gemma 1 has no piece
``\\t`` but has ``\\t\\t``), with and without byte fallback and the character map, checked live
against ``sentencepiece`` loading the same edited model.
"""

from __future__ import annotations

import functools
import gzip
import json
import tempfile
from pathlib import Path

import pytest
import sentencepiece
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sentencepiece import sentencepiece_model_pb2

from conftest import BACKENDS, DATA, GOLDEN
from wordsplit import TokenizerOptions, load_vocab
from wordsplit.errors import UnsupportedTokenizerError, VocabFormatError

FILES = {"test_sentencepiece_bpe.model.gz": "unigram-test_sentencepiece_bpe",
         "bpemb-en.wiki.bpe.vs100000.model.gz": "unigram-bpemb-en.wiki.bpe.vs100000"}
FIXTURE = DATA / "unigram" / "test_sentencepiece_bpe.model.gz"
V7 = DATA / "spm" / "mistral-v7.model"
NORMAL, USER_DEFINED, UNUSED, BYTE = 1, 4, 5, 6


def raw(path: Path) -> bytes:
    return gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()


@functools.cache
def tokenizer(path: Path, backend: str):
    return TokenizerOptions(backend=backend).build(load_vocab(path))


@functools.cache
def oracle(path: Path) -> sentencepiece.SentencePieceProcessor:
    return sentencepiece.SentencePieceProcessor(model_proto=raw(path))


# -- the two files: goldens and live ---------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", FILES)
def test_golden_ids_and_decode(name, backend):
    data = json.loads(gzip.decompress((GOLDEN / f"{FILES[name]}.json.gz").read_bytes()))
    assert data["oracle"] == f"sentencepiece {sentencepiece.__version__}" and data["model_type"] == "BPE"
    assert len(data["cases"]) > 1000
    tok = tokenizer(DATA / "unigram" / name, backend)
    assert (tok.n_vocab, tok.vocab.unk_token_id, tok.vocab.bos_token_id, tok.vocab.eos_token_id) == (
        data["n_vocab"], data["unk_id"], data["bos_id"], data["eos_id"])
    wrong = [(c["text"], c["ids"], got) for c in data["cases"] if (got := tok.encode_ordinary(c["text"])) != c["ids"]]
    assert not wrong, f"{len(wrong)} mismatches, first: {wrong[0]!r}"
    wrong = [(c["ids"], c["decoded"], got) for c in data["cases"] + data["decode_cases"]
             if (got := tok.decode(c["ids"])) != c["decoded"]]
    assert not wrong, f"{len(wrong)} decode mismatches, first: {wrong[0]!r}"
    # The goldens hold what these defaults decide: unknown runs, NFKC, whitespace runs.
    unk = data["unk_id"]
    assert any(c["ids"].count(unk) >= 1 and len(c["text"]) > 1 for c in data["cases"])
    assert any(c["text"] == "ﬁ ligature Ⅻ ①" for c in data["cases"])


# Text rich in what these models' rules decide: characters the map rewrites (NFKC), characters
# no piece spells (runs of them), whitespace runs, the removed characters of the variants.
ALPHABET = st.sampled_from([
    " ", "  ", "\t", "\t\t", "\n", "\u3000", "\u00a0", "▁", "e", "a", "the", "ing", "Hello", "1", "23", "é",
    "e\u0301", "ﬁ", "Ⅻ", "①", "ｶ", "ＡＢ", "ℌ", "日本", "中", "о", "вое", "😀", "🦀", "🦀🦀", "\u200d", "\x00",
    "\U000e0041", "\ufffd", ".", ",", "<s>", "<unk>", "⁇", "[INST]", "[REF]", "<0x41>",
])
TEXTS = st.one_of(st.lists(ALPHABET, max_size=24).map("".join), st.text(max_size=40))


def check(path: Path, backend: str, text: str) -> None:
    tok, sp = tokenizer(path, backend), oracle(path)
    ids = sp.encode(text)
    assert tok.encode_ordinary(text) == ids, text
    assert tok.count(text, disallowed_special=()) == len(ids)
    assert tok.decode(ids) == sp.decode(ids)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", FILES)
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=TEXTS)
def test_live_against_sentencepiece(name, backend, text):
    check(DATA / "unigram" / name, backend, text)


@settings(max_examples=200, deadline=None)
@given(ids=st.lists(st.integers(0, 999), max_size=12))
def test_decode_of_any_ids_is_sentencepiece_decode(ids):
    assert tokenizer(FIXTURE, "python").decode(ids) == oracle(FIXTURE).decode(ids)


def test_unknown_runs_are_one_unk_and_decode_as_its_surface():
    tok, sp = tokenizer(FIXTURE, "python"), oracle(FIXTURE)
    ids = tok.encode_ordinary("x😀🦀 y")
    assert ids == sp.encode("x😀🦀 y") and ids.count(0) == 1
    assert tok.decode(ids) == sp.decode(ids) == "x ⁇  y"
    # Offsets: the unknown token spans its whole run.
    result = tok.encode_with_offsets("x😀🦀 y", disallowed_special=())
    assert result.ids == ids
    unk_at = ids.index(0)
    assert result.byte_offsets[unk_at] == (1, 9)


def test_what_runs_natively():
    """A model with a character map, a model without byte fallback, and a model whose pieces
    hold characters that are no piece, run natively (the map in the core too)."""
    assert tokenizer(FIXTURE, "native").native
    for name in ("bpe-identity", "bpe-identity-no-space-e", "v7-no-e-o", "v7-no-fallback", "v7-no-fallback-nfkc"):
        assert tokenizer(variant(name), "native").native, name


# -- variants: edited protobufs ---------------------------------------------------------------------


def _remove(proto, *texts: str) -> None:
    keep = [p for p in proto.pieces if p.piece not in texts]
    assert len(keep) == len(proto.pieces) - len(texts), texts
    del proto.pieces[:]
    proto.pieces.extend(keep)


def _add(proto, *texts: str, score: float = -3.5) -> None:
    for text in texts:
        proto.pieces.add(piece=text, score=score, type=NORMAL)


def _identity(proto) -> None:
    proto.normalizer_spec.name = "identity"
    proto.normalizer_spec.precompiled_charsmap = b""


def _no_fallback(proto) -> None:
    proto.trainer_spec.byte_fallback = False
    keep = [p for p in proto.pieces if p.type != BYTE]
    del proto.pieces[:]
    proto.pieces.extend(keep)


VARIANTS = {
    # the fixture (nmt_nfkc, no byte fallback) without "e" and "a", which longer pieces hold
    "bpe-no-e": (FIXTURE, lambda p: _remove(p, "e", "a")),
    # the fixture with the identity normalizer: all native
    "bpe-identity": (FIXTURE, _identity),
    # ... and without "▁" and "e": an unknown ▁ joins the unknown run before it
    "bpe-identity-no-space-e": (FIXTURE, lambda p: (_identity(p), _remove(p, "▁", "e"))),
    # Mistral v7 (byte fallback) without "e" and Cyrillic "о", with Gemma 1's "\t\t" (no "\t"
    # piece: its byte piece <0x09>) and pieces of an emoji that is no piece
    "v7-no-e-o": (V7, lambda p: (_remove(p, "e", "о"), _add(p, "\t\t", "\t\t\t", "🦀🦀", "▁🦀", "x🦀"))),
    # Mistral v7 without byte fallback (and its byte pieces), without "e"
    "v7-no-fallback": (V7, lambda p: (_no_fallback(p), _remove(p, "e"), _add(p, "\t\t", "🦀🦀"))),
    # the fixture with UNUSED pieces: one a merge made is split back, one left alone is unknown
    # (and joins the unknown run beside it)
    "bpe-unused": (FIXTURE, lambda p: _unused(p, "x", "th", "▁the")),
    # ... and with nmt_nfkc's character map (the fixture's)
    "v7-no-fallback-nfkc": (V7, lambda p: (_no_fallback(p), _remove(p, "e"), _charsmap_of_fixture(p))),
}


def _unused(proto, *texts: str) -> None:
    for piece in proto.pieces:
        if piece.piece in texts:
            piece.type = UNUSED


def _charsmap_of_fixture(proto) -> None:
    fixture = sentencepiece_model_pb2.ModelProto()
    fixture.ParseFromString(raw(FIXTURE))
    proto.normalizer_spec.name = fixture.normalizer_spec.name
    proto.normalizer_spec.precompiled_charsmap = fixture.normalizer_spec.precompiled_charsmap


@functools.cache
def variant(name: str) -> Path:
    source, edit = VARIANTS[name]
    proto = sentencepiece_model_pb2.ModelProto()
    proto.ParseFromString(raw(source))
    edit(proto)
    path = Path(tempfile.mkdtemp()) / f"{name}.model"
    path.write_bytes(proto.SerializeToString())
    return path


FIXED = ["", "Hello world", "the tree", "x😀 xx the thing", "eee aaa", "\t\tx\t\t\t", "  leading and  double  ",
         "🦀🦀 🦀x🦀 x🦀🦀", "вое оо", "ﬁ Ⅻ ① ＡＢ", "😀😀 😀 x😀y", "▁▁ ▁", "e", "[REF]e[/REF]",
         "\U000e0041e\U000e0041"]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", VARIANTS)
def test_variants_on_fixed_texts(name, backend):
    for text in FIXED:
        check(variant(name), backend, text)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", VARIANTS)
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=TEXTS)
def test_variants_against_sentencepiece(name, backend, text):
    check(variant(name), backend, text)


def test_a_character_that_is_no_piece_merges():
    tok, sp = tokenizer(variant("v7-no-e-o"), "native"), oracle(variant("v7-no-e-o"))
    ids = tok.encode_ordinary("\t\t\t🦀🦀")
    assert ids == sp.encode("\t\t\t🦀🦀")
    assert [sp.id_to_piece(i) for i in ids][-2:] == ["\t\t\t", "🦀🦀"]
    tok = tokenizer(variant("v7-no-fallback"), "native")
    assert tok.encode_ordinary("🦀🦀🦀") == oracle(variant("v7-no-fallback")).encode("🦀🦀🦀")


# -- what stays refused -----------------------------------------------------------------------------


def _edited(source: Path, edit) -> Path:
    proto = sentencepiece_model_pb2.ModelProto()
    proto.ParseFromString(raw(source))
    edit(proto)
    path = Path(tempfile.mkdtemp()) / "edited.model"
    path.write_bytes(proto.SerializeToString())
    return path


def test_refusals_are_typed():
    denormalizer = _edited(FIXTURE, lambda p: setattr(p.denormalizer_spec, "precompiled_charsmap",
                                                      p.normalizer_spec.precompiled_charsmap))
    with pytest.raises(UnsupportedTokenizerError, match="denormalizer"):
        load_vocab(denormalizer)
    bad_map = _edited(FIXTURE, lambda p: setattr(p.normalizer_spec, "precompiled_charsmap", b"\x01\x02"))
    with pytest.raises(VocabFormatError, match="character map"):
        load_vocab(bad_map)
    byte_pieces = _edited(V7, lambda p: setattr(p.trainer_spec, "byte_fallback", False))
    with pytest.raises(VocabFormatError, match="byte pieces but byte_fallback is off"):
        load_vocab(byte_pieces)
    spelled = _edited(FIXTURE, lambda p: _add(p, "<0x41>"))
    with pytest.raises(UnsupportedTokenizerError, match="spelled like a byte piece"):
        load_vocab(spelled)
    spaced = _edited(FIXTURE, lambda p: p.pieces.add(piece="ﬁ x", score=0.0, type=USER_DEFINED))
    with pytest.raises(UnsupportedTokenizerError, match="user-defined piece 'ﬁ x' holds a space"):
        load_vocab(spaced)
