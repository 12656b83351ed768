"""The numpy forms of encode: ``encode_to_numpy`` (tiktoken's) and ``encode_batch_to_numpy``.

Each gives exactly :meth:`Tokenizer.encode`'s ids under the same special-token policy, on both
backends; the native array owns an exact-size native copy of the ids, which outlives the
tokenizer and the next encode on the thread (whose scratch vector the ids were written into).
"""

import gc
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import tokenizer_for
from wordsplit.errors import DisallowedSpecialError, MissingDependencyError

BACKENDS = ["python", "native"]


@pytest.fixture(scope="module", params=BACKENDS)
def tok(request):
    return tokenizer_for("cl100k_base", backend=request.param)


@settings(max_examples=60, deadline=None)
@given(text=st.text(max_size=80))
def test_encode_to_numpy_is_encode(text):
    for backend in BACKENDS:
        t = tokenizer_for("qwen3", backend=backend)
        array = t.encode_to_numpy(text, allowed_special="all")
        assert array.dtype == np.uint32 and array.ndim == 1
        assert array.tolist() == t.encode(text, allowed_special="all")


def test_the_special_token_policy_is_encodes(tok):
    text = "hi<|endoftext|>"
    with pytest.raises(DisallowedSpecialError):
        tok.encode_to_numpy(text)
    assert tok.encode_to_numpy(text, allowed_special="all").tolist() == [6151, 100257]
    assert tok.encode_to_numpy(text, disallowed_special=()).tolist() == tok.encode(text, disallowed_special=())
    assert tok.encode_to_numpy("").tolist() == []


def test_the_array_is_read_only(tok):
    array = tok.encode_to_numpy("hello world")
    assert not array.flags.writeable
    with pytest.raises(ValueError):
        array[0] = 1


def test_the_native_array_owns_its_ids_and_outlives_its_tokenizer():
    from wordsplit import TokenizerOptions, load_vocab

    fresh = TokenizerOptions(backend="native").build(load_vocab("cl100k_base"))
    array = fresh.encode_to_numpy("hello world " * 1000)
    # The array's memory is numpy's own allocation (freed with the array), no base object.
    assert array.flags.owndata and array.base is None
    assert array.flags.c_contiguous and array.flags.aligned and array.dtype == np.uint32
    del fresh
    gc.collect()
    assert array[:2].tolist() == [15339, 1917] and len(array) == 2001  # the last space alone


def test_arrays_and_lists_stay_as_they_were_after_later_encodes(tok):
    """Each call encodes into the thread's scratch vector; what it returns is its own."""
    long, short = "the quick brown fox " * 500, "hello world"
    first, first_list = tok.encode_to_numpy(long), tok.encode(long)
    second = tok.encode_to_numpy(short)
    tok.encode(long + " jumps")
    assert first.tolist() == first_list and len(first) == 2001
    assert second.tolist() == tok.encode(short) == [15339, 1917]
    assert first.nbytes == 4 * len(first)


def test_encode_batch_to_numpy_is_encode_batch(tok):
    texts = ["hello world", "", "héllo\nwörld", "<|endoftext|>"]
    ids, offsets = tok.encode_batch_to_numpy(texts, allowed_special="all")
    assert (ids.dtype, offsets.dtype) == (np.uint32, np.uint64)
    expected = tok.encode_batch(texts, allowed_special="all")
    assert [ids[offsets[i]:offsets[i + 1]].tolist() for i in range(len(texts))] == expected


def test_numpy_missing_is_a_typed_error(tok, monkeypatch):
    # A process without numpy: the import fails, and the module wordsplit keeps once it has
    # imported numpy is not there.
    import wordsplit.tokenizer
    monkeypatch.setitem(sys.modules, "numpy", None)
    monkeypatch.setattr(wordsplit.tokenizer, "_numpy_module", None)
    with pytest.raises(MissingDependencyError, match=r"pip install 'wordsplit\[numpy\]'"):
        tok.encode_to_numpy("hello")
    with pytest.raises(MissingDependencyError):
        tok.encode_batch_to_numpy(["hello"])


def test_compat_tiktoken_matches_tiktoken(tiktoken_oracle):
    import wordsplit.compat.tiktoken as compat

    ours, theirs = compat.get_encoding("cl100k_base"), tiktoken_oracle("cl100k_base")
    for text in ["hello world", "hi<|endoftext|>", "ünïcödé 123 \n\n  x"]:
        got = ours.encode_to_numpy(text, allowed_special="all")
        want = theirs.encode_to_numpy(text, allowed_special="all")
        assert got.dtype == want.dtype and got.tolist() == want.tolist()
        assert not got.flags.writeable
