"""Batches of many short texts: ``encode_batch`` and ``encode_batch_flat`` hand runs of
consecutive texts to the native threads, and give every text's ids in order, whatever the
run boundaries, with the error of the first text (in order) that fails."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wordsplit.errors import DisallowedSpecialError

from conftest import tokenizer_for

TOK = tokenizer_for("qwen3", "auto", "native")
PARTS = st.sampled_from(["", "a", " hello", " world", "\n", "\r\n", "日本語", "🙂", "e\u0301", "123",
                         "<|endoftext|>", "<think>", "x" * 3000, "  ", "\t"])
TEXTS = st.lists(st.lists(PARTS, max_size=8).map("".join), max_size=300)


@settings(max_examples=60, deadline=None)
@given(texts=TEXTS, threads=st.sampled_from([1, 2, 3]), repeat=st.sampled_from([1, 40]))
def test_batches_of_short_texts_equal_encode(texts, threads, repeat):
    texts = texts * repeat  # 40×: past the size where helpers start, many texts per run
    expected = [TOK.encode(t, disallowed_special=()) for t in texts]
    assert TOK.encode_batch(texts, num_threads=threads, disallowed_special=()) == expected
    ids, offsets = TOK.encode_batch_flat(texts, num_threads=threads, disallowed_special=())
    assert offsets.tolist()[0] == 0 and len(offsets) == len(texts) + 1
    assert [ids[offsets[i]:offsets[i + 1]].tolist() for i in range(len(texts))] == expected


@pytest.mark.parametrize("threads", [1, 2])
def test_the_error_is_the_first_failing_texts(threads):
    texts = ["fine text " * 20] * 5000
    texts[1234] = "first <|endoftext|> here"
    texts[4321] = "second <|im_start|> here"
    for call in (TOK.encode_batch, TOK.encode_batch_flat):
        with pytest.raises(DisallowedSpecialError, match="endoftext"):
            call(texts, num_threads=threads)
