"""HF Unigram tokenizer.json files (T5, ALBERT, XLM-R, Marian, the converters' files) run
entirely in the core: their normalizers (``Metaspace`` with ``whitespace_split``, T5's
``WhitespaceSplit`` then ``Metaspace``; programs of ``Precompiled``, ``Strip``, literal ``Replace``
and the ``Replace`` of a run of one character, the converters' ``" {2,}"``), the
``sentencepiece`` spanner and the ``unigram`` encoder.

* The core's ``Metaspace`` with ``whitespace_split`` (``crates/wordsplit/src/normalizers/
  sentencepiece.rs``) against the Python reference (:class:`~wordsplit.normalizers.
  sentencepiece.MetaspaceNormalizer`) on hypothesis texts rich in white space of every kind,
  alone and after a real file's character map; the Python reference against HF ``tokenizers``'
  own ``WhitespaceSplit`` then ``Metaspace`` pre-tokenizer.
* Every Unigram tokenizer.json of tests/data/unigram builds a native engine whose every stage
  is native, and its ids equal HF ``tokenizers``' (live) on hypothesis texts and the
  adversarial ones (tests/test_unigram_native.py holds the same engine to the goldens).
"""

from __future__ import annotations

import functools
import json

import pytest
import tokenizers
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from test_unigram import ADVERSARIAL, JSONS, TEXTS, UNIGRAM, raw
from wordsplit import TokenizerOptions, load_vocab, spec
from wordsplit.core import extension
from wordsplit.engines.native import native_normalizer
from wordsplit.normalizers import normalizer_for
from wordsplit.normalizers.sentencepiece import whitespace_words

native = extension()
pytestmark = pytest.mark.skipif(native is None or not UNIGRAM.is_dir(),
                                reason="the native core is not built, or tests/data/unigram/ is not here")

# White space of every kind Rust's char::is_whitespace names, and characters Python's
# str.isspace counts that it does not (U+001C..U+001F), beside words and ▁.
WHITE = [" ", "  ", "\t", "\n", "\x0b", "\x0c", "\r", "\x85", "\xa0", "\u1680", "\u2000", "\u200a", "\u2028",
         "\u2029", "\u202f", "\u205f", "\u3000", "\x1c", "\x1f", "\u200b", "\u180e"]
WORDS = st.lists(st.sampled_from(WHITE + ["a", "bc", "▁", "▁▁", "é", "日本", "😀", "ﬁ", "Ｈ", "``", "''"]),
                 max_size=16).map("".join)


@functools.cache
def t5_charsmap() -> str:
    return json.loads(raw(UNIGRAM / "t5-small" / "tokenizer.json.gz"))["normalizer"]["precompiled_charsmap"]


def befores() -> list:
    """The normalizers a Metaspace with whitespace_split runs after: none, T5's map, a
    program of the steps the converters' files hold, and a lone Unicode form."""
    program = spec.Sequence((spec.Replace("``", '"'), spec.Nfkd(), spec.StripAccents(), spec.Lowercase(),
                             spec.Precompiled(t5_charsmap()), spec.Strip(left=False, right=True),
                             spec.Replace(" {2,}", "\u2581", regex=True)))
    return [spec.NoNormalizer(), spec.Precompiled(t5_charsmap()), program, spec.Nfkc()]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.one_of(WORDS, st.text(max_size=20)), which=st.integers(0, 3))
@example(text=" a\u3000 ▁b  c\t", which=0)
@example(text="\x1ca\x85\u200bb", which=1)
def test_native_whitespace_split_is_the_python_reference(text, which):
    stage = spec.Metaspace(before=befores()[which], whitespace_split=True)
    assert native_normalizer(stage)
    expected = normalizer_for(stage)(text)
    assert native.native_normalize(json.dumps(stage.to_json()), [text]) == [expected]


@functools.cache
def hf_pre_tokenizer():
    from tokenizers import pre_tokenizers

    return pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(),
                                    pre_tokenizers.Metaspace(prepend_scheme="always", split=False)])


@settings(max_examples=300, deadline=None)
@given(text=st.one_of(WORDS, st.text(max_size=20)))
def test_the_python_reference_is_hfs_pre_tokenizer(text):
    """HF's WhitespaceSplit then Metaspace (``split: false``: one piece per word) gives the
    words the reference joins, each with its ▁."""
    words = [piece for piece, _ in hf_pre_tokenizer().pre_tokenize_str(text)]
    assert "".join(words) == normalizer_for(spec.Metaspace(whitespace_split=True))(text)
    assert len(words) == len(whitespace_words(text))


def test_whitespace_split_takes_every_scheme_and_keep_white_space_needs_it():
    """``never`` after ``WhitespaceSplit`` keeps the white space (as ``first`` does, and
    ``always`` with ``keep_white_space``, HF's ``split: false``); ``keep_white_space`` alone
    drops nothing, so it is refused."""
    assert spec.Metaspace(prepend_scheme="never", whitespace_split=True).keeps_white_space
    assert spec.Metaspace(prepend_scheme="first", whitespace_split=True).keeps_white_space
    assert not spec.Metaspace(whitespace_split=True).keeps_white_space
    assert spec.Metaspace(whitespace_split=True, keep_white_space=True).keeps_white_space
    with pytest.raises(ValueError, match="keep_white_space needs whitespace_split"):
        spec.Metaspace(keep_white_space=True)


@functools.cache
def native_tok(name: str):
    return TokenizerOptions(backend="native").build(load_vocab(UNIGRAM / name))


@functools.cache
def hf_oracle(name: str) -> tokenizers.Tokenizer:
    return tokenizers.Tokenizer.from_str(raw(UNIGRAM / name).decode("utf-8"))


@pytest.mark.parametrize("name", JSONS)
def test_every_stage_is_native(name):
    vocab = load_vocab(UNIGRAM / name)
    assert native_normalizer(vocab.normalizer), vocab.normalizer
    assert TokenizerOptions().build(vocab)._engine.native
    assert native_tok(name)._engine.native


def test_t5s_layout_is_the_typed_metaspace():
    normalizer = load_vocab(UNIGRAM / "t5-small" / "tokenizer.json.gz").normalizer
    assert normalizer == spec.Metaspace(before=spec.Sequence((spec.Precompiled(t5_charsmap()),)), whitespace_split=True)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.one_of(TEXTS, WORDS), name=st.sampled_from(JSONS))
def test_native_files_against_tokenizers(text, name):
    ids = hf_oracle(name).encode(text, add_special_tokens=False).ids
    assert native_tok(name).encode(text, allowed_special="all") == ids


@pytest.mark.parametrize("name", JSONS)
def test_native_files_adversarial_against_tokenizers(name):
    oracle = hf_oracle(name)
    for text in [*ADVERSARIAL, "a \u3000b\x85\u2028c\x1cd  " * 50, "\n\n".join(["Hello  world"] * 40)]:
        assert native_tok(name).encode(text, allowed_special="all") == \
            oracle.encode(text, add_special_tokens=False).ids, text[:40]
