"""accelerate() on a tokenizer wordsplit cannot run warns once, naming the reason, and returns a
copy that gives the original's results on transformers' code; with strict=True it raises a
typed error instead. A tokenizer wordsplit runs warns of nothing."""

from __future__ import annotations

import warnings

import pytest
from tokenizers import Tokenizer as HFTokenizer
from tokenizers import decoders, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast

from wordsplit.compat.transformers import NotAcceleratedWarning, accelerate, disable, enable, is_accelerated
from wordsplit.errors import UnsupportedTokenizerError


def word_level(pre_tokenizer) -> PreTrainedTokenizerFast:
    """A small WordLevel tokenizer; wordsplit loads it with a Whitespace pre-tokenizer, not with
    a Metaspace one."""
    words = ["[UNK]", "[PAD]", "hello", "world", "▁hello", "▁world"]
    hf = HFTokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="[UNK]"))
    hf.pre_tokenizer = pre_tokenizer
    hf.decoder = decoders.WordPiece()
    return PreTrainedTokenizerFast(tokenizer_object=hf, pad_token="[PAD]", unk_token="[UNK]")


def test_a_tokenizer_wordsplit_cannot_run_warns_once_with_the_reason():
    tok = word_level(pre_tokenizers.Metaspace())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fast = accelerate(tok)
    assert [w.category for w in caught] == [NotAcceleratedWarning]
    message = str(caught[0].message)
    assert f"cannot run this {type(tok).__name__}: " in message and "Metaspace pre-tokenizer" in message
    assert "transformers' own code" in message
    assert caught[0].filename == __file__  # the caller's line
    assert is_accelerated(fast) and not fast.backend_tokenizer.accelerated
    assert fast("hello world")["input_ids"] == tok("hello world")["input_ids"]


def test_strict_raises_a_typed_error_naming_the_reason():
    tok = word_level(pre_tokenizers.Metaspace())
    with pytest.raises(UnsupportedTokenizerError, match=rf"cannot run this {type(tok).__name__}: .*Metaspace"):
        accelerate(tok, strict=True)
    assert issubclass(UnsupportedTokenizerError, ValueError)


def test_a_tokenizer_wordsplit_runs_warns_of_nothing():
    tok = word_level(pre_tokenizers.Whitespace())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fast = accelerate(tok, strict=True)
    assert fast.backend_tokenizer.accelerated
    assert fast("hello world")["input_ids"] == tok("hello world")["input_ids"] == [2, 3]


def test_enable_warns_for_a_tokenizer_it_loads_and_cannot_run(tmp_path):
    word_level(pre_tokenizers.Metaspace()).save_pretrained(tmp_path)
    enable()
    try:
        with pytest.warns(NotAcceleratedWarning, match="Metaspace"):
            loaded = PreTrainedTokenizerFast.from_pretrained(str(tmp_path))
    finally:
        disable()
    assert is_accelerated(loaded)
