"""The core's Unigram encoder (``crates/wordsplit/src/encoders/unigram.rs``) against the Python
reference (:class:`wordsplit.encoders.unigram.UnigramEncoder`) and against the oracles.

* Hypothesis vocabularies of each style (``hf``, ``sentencepiece``, ``llama.cpp``) with random
  pieces and scores, unknown characters, user-defined and added pieces, byte fallback: the
  native pipeline's ids equal the Python encoder's on random texts, and on long runs of one
  character where ``sentencepiece``'s rebasing decides.
* The real Unigram files of tests/data/unigram: ``backend="native"`` equals the goldens (the
  oracles' ids: sentencepiece for ``.model`` files, HF tokenizers for tokenizer.json), the live
  oracles on hypothesis text, and the Python backend.
"""

from __future__ import annotations

import functools
from unittest import mock

import pytest
import sentencepiece
import tokenizers
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from test_unigram import ADVERSARIAL, JSONS, MODELS, TEXTS, UNIGRAM, golden, json_golden_name, \
    model_golden_name, raw
from wordsplit import TokenizerOptions, Vocab, load_vocab
from wordsplit.encoders.unigram import UnigramEncoder
from wordsplit.errors import EncodeInputError
from wordsplit.formats.hf import read_hf_tokenizer_json
from wordsplit.spec import PipelineSpec, SentencePieceDecoder, SentencePieceSplit, Unigram

pytestmark = pytest.mark.skipif(not UNIGRAM.is_dir(), reason="tests/data/unigram/ (the family data) is not here")


def native_build(vocab: Vocab):
    """The native tokenizer of ``vocab``; its encode calls run with the Python encoder
    disabled (a character map the core does not run yet may be a Python stage: the encoder
    never is)."""
    tok = TokenizerOptions(backend="native").build(vocab)
    return NativeOnly(tok)


class NativeOnly:
    """A tokenizer whose encode calls fail if the Python Unigram encoder runs."""

    def __init__(self, tok) -> None:
        self.tok = tok

    def _call(self, method: str, *args, **kwargs):
        with mock.patch.object(UnigramEncoder, "encode_text", side_effect=AssertionError("the Python encoder ran")):
            return getattr(self.tok, method)(*args, **kwargs)

    def encode_ordinary(self, text: str) -> list[int]:
        return self._call("encode_ordinary", text)

    def encode(self, text: str, **kwargs) -> list[int]:
        return self._call("encode", text, **kwargs)


def python_build(vocab: Vocab):
    return TokenizerOptions(backend="python").build(vocab)


# -- hypothesis vocabularies of each style ------------------------------------------------------

LETTERS = "abcé▁日<>"


@st.composite
def vocabularies(draw):
    """A Unigram vocabulary: ``<unk>`` (or none, for ``hf``), random pieces over LETTERS with
    random scores (ties among them), for ``sentencepiece`` some user-defined pieces, for
    ``llama.cpp`` added tokens and UNUSED ones, and byte pieces with ``byte_fallback``."""
    style = draw(st.sampled_from(["hf", "sentencepiece", "llama.cpp"]))
    pieces = draw(st.lists(st.text(LETTERS, min_size=1, max_size=4), min_size=1, max_size=30, unique=True))
    score = st.one_of(st.sampled_from([-1.0, -2.0, -2.5, -0.5]), st.floats(-20, 0, allow_nan=False, width=32))
    scores = [draw(score) for _ in pieces]
    byte_fallback = draw(st.booleans())
    has_unk = style != "hf" or draw(st.booleans())
    texts = (["<unk>"] if has_unk and style == "hf" else []) + pieces
    text_scores = ([0.0] if has_unk and style == "hf" else []) + scores
    if byte_fallback:
        texts += [f"<0x{b:02X}>" for b in range(256)]
        text_scores += [0.0] * 256
    ranks = {t.encode(): i for i, t in enumerate(texts)}
    special, added, user_defined, unused = {}, {}, (), ()
    if has_unk and style != "hf":
        special["<unk>"] = len(texts)
        text_scores.append(0.0)
    if style == "sentencepiece":
        user_defined = tuple(draw(st.lists(st.sampled_from(pieces), max_size=3, unique=True)))
    if style == "llama.cpp":
        for t in draw(st.lists(st.sampled_from(pieces), max_size=3, unique=True)):
            added[t] = ranks[t.encode()]
        unused = tuple(t for t in draw(st.lists(st.sampled_from(pieces), max_size=2, unique=True)) if t not in added)
        if len(set(added) | set(unused)) == len(pieces):
            unused = ()
            added.pop(pieces[0], None)
    pipeline = PipelineSpec(
        spanner=SentencePieceSplit(),
        model=Unigram(unk_token="<unk>" if has_unk else "", byte_fallback=byte_fallback, user_defined=user_defined),
        decoder=SentencePieceDecoder(style=style, unused=unused if style == "llama.cpp" else ()),
    )
    return Vocab(name=f"h-{style}", ranks=ranks, scores=text_scores, special_tokens=special, added_tokens=added,
                 pipeline=pipeline, n_vocab=len(text_scores))


def same_result(vocab: Vocab, text: str) -> list[int] | None:
    """The native and Python ids of ``text`` (equal), or None where both raise the same error."""
    native, python = native_build(vocab), python_build(vocab)
    try:
        want = python.encode_ordinary(text)
    except EncodeInputError:
        with pytest.raises(EncodeInputError):
            native.encode_ordinary(text)
        return None
    assert native.encode_ordinary(text) == want, (vocab.pipeline, text)
    return want


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(vocab=vocabularies(), text=st.text(LETTERS + "xyzü😀 ", max_size=40))
def test_native_equals_the_python_reference(vocab, text):
    same_result(vocab, text)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(vocab=vocabularies(), char=st.sampled_from(list(LETTERS + "x")), extra=st.text(LETTERS, max_size=5))
def test_long_runs_rebase_as_the_reference_does(vocab, char, extra):
    """120 kB of one character (and a tail): ``sentencepiece``'s sums pass ±100,000 and rebase
    many times."""
    same_result(vocab, char * 120_000 + extra)


def test_a_megabyte_run_completes_natively():
    """1 MB of one character through the native search: linear (each start walks at most the
    longest piece, each rebase shifts the scores up to the furthest candidate end), so this
    completes at once; a quadratic search would not finish within the test run."""
    vocab = load_vocab(UNIGRAM / "test_sentencepiece.model.gz")
    ids = native_build(vocab).encode_ordinary("x" * 1_000_000)
    assert len(ids) > 1000


# -- the real files: goldens, live oracles, the Python backend ------------------------------------


def file_vocab(name: str) -> Vocab:
    """The Vocab of a test file: a ``.model`` by load_vocab, a tokenizer.json by HF's reader."""
    path = UNIGRAM / name
    return load_vocab(path) if name in MODELS else read_hf_tokenizer_json(raw(path), source=str(path))


@functools.cache
def native_file(name: str):
    return native_build(file_vocab(name))


@functools.cache
def python_file(name: str):
    return python_build(file_vocab(name))


@pytest.mark.parametrize("name", MODELS)
def test_model_golden_native(name):
    data = golden(model_golden_name(name))
    tok = native_file(name)
    wrong = [(c["text"], c["ids"], got) for c in data["cases"] if (got := tok.encode_ordinary(c["text"])) != c["ids"]]
    assert not wrong, f"{len(wrong)} mismatches, first: {wrong[0]!r}"


@pytest.mark.parametrize("name", JSONS)
def test_json_golden_native(name):
    data = golden(json_golden_name(name))
    tok = native_file(name)
    wrong = [(c["text"], c["ids"], got) for c in data["cases"]
             if (got := tok.encode(c["text"], allowed_special="all")) != c["ids"]]
    assert not wrong, f"{len(wrong)} mismatches, first: {wrong[0]!r}"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=TEXTS, name=st.sampled_from(MODELS))
def test_models_native_against_sentencepiece(text, name):
    oracle = sentencepiece.SentencePieceProcessor(model_proto=raw(UNIGRAM / name))
    assert native_file(name).encode_ordinary(text) == oracle.EncodeAsIds(text)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=TEXTS, name=st.sampled_from(JSONS))
def test_jsons_native_against_tokenizers(text, name):
    oracle = hf_oracle(name)
    assert native_file(name).encode(text, allowed_special="all") == oracle.encode(text, add_special_tokens=False).ids


@functools.cache
def hf_oracle(name: str) -> tokenizers.Tokenizer:
    return tokenizers.Tokenizer.from_str(raw(UNIGRAM / name).decode("utf-8"))


@pytest.mark.parametrize("name", MODELS + JSONS)
def test_adversarial_and_long_texts_equal_the_python_backend(name):
    native, python = native_file(name), python_file(name)
    for text in [*ADVERSARIAL, "a" * 150_000, "ab" * 60_000 + "ü", "日本" * 50_000]:
        assert native.encode_ordinary(text) == python.encode_ordinary(text), text[:20]
