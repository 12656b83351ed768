"""The Tokenizer API: specials policy, decode, errors, round trips, the public surface."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import wordsplit
from conftest import OPENAI_NAMES, tokenizer_for
from wordsplit import (
    DecodeInputError,
    DisallowedSpecialError,
    EncodeInputError,
    TokenizerOptions,
    UnknownComponentError,
    UnknownTokenError,
    UnknownVocabError,
    WordsplitError,
    get_tokenizer,
    load_vocab,
)
from wordsplit.normalizers import nfc


def test_public_api_is_pinned():
    assert wordsplit.__all__ == [
        "BackendUnavailableError", "ComponentError", "DecodeInputError", "DisallowedSpecialError", "DownloadError",
        "DuplicateNameError", "EncodeInputError", "HashMismatchError", "MergeTables", "OfflineError", "PluginError",
        "Tokenizer", "TokenizerOptions", "UnknownComponentError", "UnknownTokenError", "UnknownVocabError",
        "UnsupportedTokenizerError", "Vocab", "VocabFormatError", "WordsplitError", "get_tokenizer",
        "list_vocabs", "load_vocab", "register_encoder", "register_loader", "register_normalizer",
        "register_spanner", "register_vocab", "TrainingInputError", "save_vocab", "train", "__version__",
    ]


def test_readme_example():
    tok = TokenizerOptions().build(load_vocab("qwen3"))
    assert tok.encode("hello world") == [14990, 1879]
    assert tok.decode([14990, 1879]) == "hello world"


def test_known_ids():
    assert get_tokenizer("cl100k_base").encode("hello world") == [15339, 1917]
    assert get_tokenizer("o200k_base").encode("hello world") == [24912, 2375]
    for name in ("gpt2", "r50k_base", "p50k_base"):
        assert get_tokenizer(name).encode("hello world") == [31373, 995]


def test_vocab_facts():
    qwen = tokenizer_for("qwen3")
    assert qwen.n_vocab == 151669 and qwen.eos_token_id == 151645
    assert qwen.special_tokens["<|im_start|>"] == 151644 and "<think>" not in qwen.special_tokens
    assert qwen.vocab.added_tokens["<think>"] == 151667
    assert tokenizer_for("o200k_harmony").n_vocab == 201088
    assert tokenizer_for("cl100k_base").eot_token == 100257


def test_special_policy_like_tiktoken():
    tok = tokenizer_for("cl100k_base")
    with pytest.raises(DisallowedSpecialError, match="allowed_special") as info:
        tok.encode("a<|endoftext|>")
    assert isinstance(info.value, ValueError)
    assert tok.encode("a<|endoftext|>", allowed_special="all") == [64, 100257]
    assert tok.encode("a<|endoftext|>", allowed_special={"<|endoftext|>"}) == [64, 100257]
    assert tok.encode("a<|endoftext|>", disallowed_special=()) == tok.encode_ordinary("a<|endoftext|>")
    with pytest.raises(DisallowedSpecialError):
        tok.encode("<|fim_prefix|>", allowed_special={"<|endoftext|>"})
    with pytest.raises(TypeError, match="allowed_special"):
        tok.encode("x", allowed_special="<|endoftext|>")


def test_qwen3_added_tokens_always_matched_specials_follow_policy():
    tok = tokenizer_for("qwen3")
    assert tok.encode("<think>\n\n</think>\n\n") == [151667, 271, 151668, 271]
    assert tok.encode_ordinary("<tool_call>") == [151657]
    with pytest.raises(DisallowedSpecialError, match="<\\|im_start\\|>"):
        tok.encode("<|im_start|>user")
    assert tok.encode("<|im_start|>user", allowed_special="all")[0] == 151644
    assert 151644 not in tok.encode_ordinary("<|im_start|>user")


def test_added_tokens_are_split_before_nfc():
    # ">" + U+0338 composes to "≯" under NFC; HF splits "<think>" out first, so do we.
    assert tokenizer_for("qwen3").encode("<think>\u0338")[0] == 151667


def test_encode_rejects_non_str():
    tok = tokenizer_for("qwen3")
    for bad in (b"hello", None, 42, ["a"]):
        with pytest.raises(EncodeInputError) as info:
            tok.encode(bad)
        assert isinstance(info.value, TypeError)
    with pytest.raises(EncodeInputError, match="decode"):
        tok.encode_ordinary(b"bytes")


@pytest.mark.parametrize("backend", ["python", "native"])
def test_batches_reject_non_str_items(backend):
    tok = tokenizer_for("cl100k_base", "auto", backend)
    for method in (tok.encode_batch, tok.encode_batch_flat):
        with pytest.raises(EncodeInputError, match=r"^text 1 of the batch is a bytes, not a str .*decode") as info:
            method(["fine", b"bytes", "fine"])
        assert isinstance(info.value, TypeError) and info.value.__context__ is None  # no pyo3 error chained
        with pytest.raises(EncodeInputError, match="text 1 of the batch is a NoneType, not a str"):
            method(iter(["fine", None]))
    assert tok.encode_batch(iter(["a", "b"])) == tok.encode_batch(("a", "b")) == [tok.encode("a"), tok.encode("b")]


def test_decode_errors_name_the_id():
    tok = tokenizer_for("cl100k_base")
    with pytest.raises(UnknownTokenError, match="100256 is unused"):
        tok.decode([1, 100256])
    with pytest.raises(UnknownTokenError, match="1000000") as info:
        tok.decode([1000000])
    assert isinstance(info.value, KeyError) and isinstance(info.value, WordsplitError)
    with pytest.raises(UnknownTokenError, match="-1"):
        tok.decode([-1])
    with pytest.raises(DecodeInputError):
        tok.decode(["12"])
    with pytest.raises(UnknownTokenError):
        tok.token_to_id("definitely not one token")
    assert tok.token_to_id("hello") == 15339 and tok.token_to_id(b" world") == 1917
    assert tok.id_to_token(100257) == b"<|endoftext|>"


def test_harmony_shared_special_id_decodes_like_tiktoken():
    tok = tokenizer_for("o200k_harmony")
    assert tok.encode("<|endofprompt|><|reserved_200018|>", allowed_special="all") == [200018, 200018]
    assert tok.decode_bytes([200018]) == b"<|endofprompt|>"


def test_unknown_vocab_suggests_closest():
    with pytest.raises(UnknownVocabError, match="Did you mean 'cl100k_base'") as info:
        load_vocab("cl100k")
    assert isinstance(info.value, KeyError) and "o200k_base" in str(info.value)


def test_unknown_options():
    with pytest.raises(UnknownComponentError, match="heap-merge"):
        TokenizerOptions(encoder="heapmerge")
    with pytest.raises(UnknownComponentError, match="python"):
        TokenizerOptions(backend="gpu")
    with pytest.raises(UnknownComponentError, match="regex"):
        TokenizerOptions(spanner="nope")


texts = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=80)


@pytest.mark.parametrize("name", ["qwen3", *OPENAI_NAMES])
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=texts)
def test_round_trip(name, text):
    tok = tokenizer_for(name)
    expected = nfc(text) if name == "qwen3" else text
    assert tok.decode(tok.encode(text, disallowed_special=())) == expected


@pytest.mark.parametrize("name", OPENAI_NAMES)
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_partial_utf8_decodes_like_tiktoken(name, data, tiktoken_oracle):
    tok, enc = tokenizer_for(name), tiktoken_oracle(name)
    ids = data.draw(st.lists(st.integers(0, 50255), max_size=6))
    assert tok.decode(ids) == enc.decode(ids)
    assert tok.decode_bytes(ids) == enc.decode_bytes(ids)


def test_partial_utf8_strict_raises():
    tok = tokenizer_for("cl100k_base")
    ids = tok.encode("中")
    partial = [tok.token_to_id(bytes([b])) for b in "中".encode()[:2]]
    assert tok.decode(partial) == "\ufffd"
    with pytest.raises(UnicodeDecodeError):
        tok.decode(partial, errors="strict")
    assert tok.decode(ids, errors="strict") == "中"


def test_nfc_applied_for_qwen3_only():
    nfd = unicodedata.normalize("NFD", "é")
    assert tokenizer_for("qwen3").encode(nfd) == [963]
    assert tokenizer_for("cl100k_base").decode(tokenizer_for("cl100k_base").encode(nfd)) == nfd


def test_batch_and_count():
    tok = tokenizer_for("qwen3")
    texts = ["hello world", "", "<think>x", "Hello, world!"]
    assert tok.encode_batch(texts) == [tok.encode(t) for t in texts]
    assert tok.decode_batch(tok.encode_batch(texts)) == texts
    assert tok.count("Hello, world!") == 4
    with pytest.raises(DisallowedSpecialError):
        tok.encode_batch(["<|im_end|>"])


@pytest.mark.parametrize("backend", ["native", "python"])
def test_tokenizers_and_vocabs_pickle(backend):
    """Worker processes get tokenizers by pickle: the same ids, options and vocab come back."""
    import pickle

    tok = TokenizerOptions(backend=backend, encoder="backtrack", num_threads=1).build(load_vocab("o200k_harmony"))
    text = "Pickled <|endoftext|> tokenizers\u00a0encode the same: ümlaut, 12345, ␣␣"
    copy = pickle.loads(pickle.dumps(tok))
    assert repr(copy) == repr(tok) and copy.num_threads == 1
    assert copy.encode(text, allowed_special="all") == tok.encode(text, allowed_special="all")
    assert copy.vocab is not tok.vocab and copy.vocab.content_hash == tok.vocab.content_hash
    assert copy.vocab.token_bytes == tok.vocab.token_bytes and copy.vocab.eos_token_id == tok.vocab.eos_token_id
    qwen = TokenizerOptions(backend=backend).build(load_vocab("qwen3"))  # added tokens, NFC
    text = "<think>Cafe\u0301</think>"
    assert pickle.loads(pickle.dumps(qwen)).encode(text) == qwen.encode(text)
