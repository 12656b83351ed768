"""The core's offsets of Unigram pipelines (the ``unigram`` encoder's token lengths,
``crates/wordsplit/src/encoders/unigram_spans.rs``, placed through the SentencePiece and
Metaspace normalizers' alignments) on every Unigram file of tests/data/unigram:

* ``backend="native"`` gives the Python engine's ``encode_with_offsets`` (ids, byte and char
  offsets, word ids), with the Python engine kept out of the native call, on the corpus lines
  of each file's golden, adversarial texts, special-token text and hypothesis text;
* for the tokenizer.json files, its char offsets are HF tokenizers 0.23's ``encode(...).offsets``
  once the byte-fallback tokens of an unknown run each get the whole run's (HF's
  ``Unigram::tokenize``; the core's ``Tokenizer::encoding`` does the same, see
  ``crates/wordsplit/tests/file_models.rs``).
"""

from __future__ import annotations

import functools
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from test_unigram import ADVERSARIAL, JSONS, MODELS, TEXTS, UNIGRAM, golden, hf_oracle, json_golden_name, \
    model_golden_name, raw
from wordsplit import TokenizerOptions, load_vocab
from wordsplit.core import extension
from wordsplit.engines.python import PythonEngine
from wordsplit.formats.hf import read_hf_tokenizer_json

pytestmark = [
    pytest.mark.skipif(not UNIGRAM.is_dir(), reason="tests/data/unigram/ (the family data) is not here"),
    pytest.mark.skipif(extension() is None, reason="the native core is not built"),
]

FILES = MODELS + JSONS
# Unknown characters (byte fallback's runs, the unknown token's), special-token text, a typed
# byte piece, spaces of every layout.
EXTRA = ["", " ", "a 😀", "😀😀 x", "①😀 ｶﾞ\x00", "x \U0010ffff\u0300y", "<s>Hello</s> <unk> <pad>",
         "a<0x41>b<0xF0>", "  Hello   world  ", "\ta\u3000b\n", "▁▁x ▁", "日本語のテキスト", "Ｈｅｌｌｏ ㍻ ﬁ"]


@functools.cache
def both(name: str):
    """The Python and native tokenizers of file ``name``."""
    path = UNIGRAM / name
    vocab = load_vocab(path) if name in MODELS else read_hf_tokenizer_json(raw(path), source=str(path))
    return tuple(TokenizerOptions(backend=backend).build(vocab) for backend in ("python", "native"))


def texts_of(name: str) -> list[str]:
    stem = model_golden_name(name) if name in MODELS else json_golden_name(name)
    return [case["text"] for case in golden(stem)["cases"][:400]] + ADVERSARIAL + EXTRA


def assert_native_is_python(name: str, text: str) -> None:
    python, native = both(name)
    for kwargs in ({"allowed_special": "all"}, {"disallowed_special": ()}):
        with mock.patch.object(PythonEngine, "encode_with_offsets", side_effect=AssertionError("Python ran")):
            got = native.encode_with_offsets(text, **kwargs)
        expected = python.encode_with_offsets(text, **kwargs)
        assert (got.ids, got.byte_offsets, got.char_offsets, got.word_ids) == \
            (expected.ids, expected.byte_offsets, expected.char_offsets, expected.word_ids), (name, text, kwargs)


@pytest.mark.parametrize("name", FILES)
def test_native_offsets_are_the_python_engines(name):
    assert both(name)[1]._engine._native_offsets
    for text in texts_of(name):
        assert_native_is_python(name, text)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=TEXTS, name=st.sampled_from(FILES))
def test_native_offsets_are_the_python_engines_on_hypothesis_text(text, name):
    assert_native_is_python(name, text)


def hf_offsets(tok, result) -> list[tuple[int, int]]:
    """``result``'s char offsets with each unknown run's byte-fallback tokens given the whole
    run's (HF's): consecutive ``<0xNN>`` tokens of one piece that stand for less than a typed
    ``<0xNN>`` (six characters) are one run."""
    byte_ids = {i for i in tok._engine.encoder.byte_ids if i is not None}
    offsets, words, spans = list(result.char_offsets), result.word_ids, result.byte_offsets
    fallback = [i in byte_ids and spans[k][1] - spans[k][0] < 6 for k, i in enumerate(result.ids)]
    k = 0
    while k < len(offsets):
        end = k + 1
        while fallback[k] and end < len(offsets) and fallback[end] and words[end] == words[k]:
            end += 1
        offsets[k:end] = [(offsets[k][0], offsets[end - 1][1])] * (end - k)
        k = end
    return offsets


@pytest.mark.parametrize("name", JSONS)
def test_native_offsets_are_hfs(name):
    python, native = both(name)
    oracle = hf_oracle(name)
    for text in texts_of(name):
        expected = oracle.encode(text, add_special_tokens=False)
        got = native.encode_with_offsets(text, allowed_special="all")
        assert got.ids == expected.ids, text
        assert hf_offsets(python, got) == [tuple(span) for span in expected.offsets], (name, text)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=TEXTS, name=st.sampled_from(JSONS))
def test_native_offsets_are_hfs_on_hypothesis_text(text, name):
    python, native = both(name)
    expected = hf_oracle(name).encode(text, add_special_tokens=False)
    got = native.encode_with_offsets(text, allowed_special="all")
    assert got.ids == expected.ids
    assert hf_offsets(python, got) == [tuple(span) for span in expected.offsets]
