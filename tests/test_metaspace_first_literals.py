"""A stretch after an added token under HF's ``Metaspace`` with ``prepend_scheme: "first"``
gets no ``▁`` before it; with a ``normalized`` added token, HF's second pass runs on each
stretch's text as the normalizer before ``Metaspace`` makes it, and ``Metaspace`` then runs on
each part that pass leaves (the part that starts the input gets the ``▁``, the others do not):
both backends give HF ``tokenizers`` 0.23's ids and offsets, the native one without calling
the Python engine (the core's second pass, ``crates/wordsplit/src/pipeline/second_pass.rs``
and ``normalizers/metaspace_parts.rs``).

The file is test_sentencepiece.t5's tokenizer.json (tests/data/unigram) without its normalizer,
with ``Metaspace`` ``first`` (``split`` true and false) and an added token ``" hello"``
(``normalized``: HF looks for it in the stretch's text, space and all).
"""

from __future__ import annotations

import functools
import gzip
import json
from pathlib import Path
from unittest import mock

import pytest
import tokenizers
from hypothesis import given, settings
from hypothesis import strategies as st

from wordsplit import TokenizerOptions
from wordsplit.core import extension
from wordsplit.engines.python import PythonEngine
from wordsplit.formats.hf import read_hf_tokenizer_json
from wordsplit.vocab import NORMALIZED

pytestmark = pytest.mark.skipif(extension() is None, reason="the native core is not built")

FILE = Path(__file__).parent / "data" / "unigram" / "test_sentencepiece.t5.tokenizer.json.gz"
HELLO = 1100  # the added token's id (the model's vocab has 1,100 entries)
TEXTS = ["</s>b hello", "</s> hello b", "a hello</s>b hello c", "hello", " hello", "</s>hello", "x</s>  hello",
         "a  hello b", "</s></s> b", "<s>ab cd hello", "Hello world hello", "", "</s>", " </s> "]


@functools.cache
def layout(split: bool):
    """HF's tokenizer and wordsplit's Python and native ones of the file with ``split``."""
    spec = json.loads(gzip.decompress(FILE.read_bytes()))
    metaspace = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first", "split": split}
    spec["normalizer"] = None
    spec["pre_tokenizer"] = spec["decoder"] = metaspace
    hello = len(spec["model"]["vocab"])
    assert hello == HELLO
    spec["added_tokens"].append({"id": hello, "content": " hello", "single_word": False, "lstrip": False,
                                 "rstrip": False, "normalized": True, "special": False})
    text = json.dumps(spec)
    vocab = read_hf_tokenizer_json(text.encode(), source="t5-first-literal.json")
    assert vocab.literal_flags[" hello"] == NORMALIZED
    built = tuple(TokenizerOptions(backend=backend).build(vocab) for backend in ("python", "native"))
    return (tokenizers.Tokenizer.from_str(text), *built)


def check(split: bool, text: str) -> None:
    hf, python, native = layout(split)
    expected = hf.encode(text, add_special_tokens=False)
    found = python.encode_with_offsets(text, allowed_special="all")
    with mock.patch.object(PythonEngine, "encode", side_effect=AssertionError("Python ran")), \
            mock.patch.object(PythonEngine, "encode_with_offsets", side_effect=AssertionError("Python ran")):
        ids = native.encode(text, allowed_special="all")
        placed = native.encode_with_offsets(text, allowed_special="all")
    assert found.ids == ids == placed.ids == expected.ids, (split, text)
    assert (placed.byte_offsets, placed.char_offsets, placed.word_ids) == \
        (found.byte_offsets, found.char_offsets, found.word_ids), (split, text)
    assert found.char_offsets == [tuple(o) for o in expected.offsets], (split, text)


@pytest.mark.parametrize("split", [True, False])
def test_a_stretch_after_a_token_is_a_later_one(split):
    for text in TEXTS:
        check(split, text)
    # (the stretch after "</s>" has no ▁ before its "b", the text's first one has)
    native = layout(split)[2]
    assert native.encode("</s>b hello", allowed_special="all")[1:] != native.encode("b hello")
    # (the part after " hello" gets no ▁ either: "first" is the input's start only)
    check(split, "a hellob")
    assert native.encode("a hellob", allowed_special="all")[-1] != native.encode("b")[-1]
    assert native._engine.native and not native._engine._python, "the native backend runs the pipeline itself"


@settings(max_examples=150, deadline=None)
@given(split=st.booleans(),
       text=st.lists(st.sampled_from(["</s>", " hello", "hello", " ", "  ", "a", "b", "Hello", "\u2581", "é"]),
                     max_size=10).map("".join))
def test_hypothesis_texts(split, text):
    check(split, text)
