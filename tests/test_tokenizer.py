"""The Tokenizer API: specials policy, decode, errors, round trips, the public surface."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import wordsplit
from conftest import BACKENDS, OPENAI_NAMES, tokenizer_for
from wordsplit import TokenizerOptions, WordsplitError, get_tokenizer, load_vocab
from wordsplit.errors import (
    DecodeInputError,
    DisallowedSpecialError,
    EncodeInputError,
    OptionTypeError,
    OptionValueError,
    UnknownComponentError,
    UnknownTokenError,
    UnknownVocabError,
)
from wordsplit.normalizers import nfc


def test_public_api_is_pinned():
    """The top level: loading, building, the registries, and WordsplitError (each error class is
    in wordsplit.errors, which exports every one of them)."""
    assert wordsplit.__all__ == [
        "MergeTables", "Tokenizer", "TokenizerOptions", "Vocab", "WordsplitError", "get_tokenizer",
        "list_vocabs", "load_vocab", "register_encoder", "register_loader", "register_normalizer",
        "register_spanner", "register_vocab", "save_vocab", "train", "__version__",
    ]
    from wordsplit import errors

    classes = [name for name, value in vars(errors).items()
               if isinstance(value, type) and issubclass(value, wordsplit.WordsplitError)]
    assert sorted(classes) == sorted(errors.__all__) and len(classes) > 20
    assert not [name for name in dir(wordsplit) if name.endswith("Error") and name != "WordsplitError"]


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


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_empty_disallowed_special_is_an_ordinary_encode_in_every_form(backend):
    # disallowed_special=() (tiktoken's spelling) has a path of its own; other empty
    # collections and None take the general one: all encode special tokens as text.
    tok = TokenizerOptions(backend=backend).build(load_vocab("cl100k_base"))
    text = "a<|endoftext|> b<|fim_prefix|>"
    ordinary = tok.encode_ordinary(text)
    assert 100257 not in ordinary
    for empty in [(), [], set(), frozenset(), None]:
        assert tok.encode(text, disallowed_special=empty) == ordinary
        assert tok.encode_to_numpy(text, disallowed_special=empty).tolist() == ordinary
        assert tok.count(text, disallowed_special=empty) == len(ordinary)
    # Allowing some while disallowing none encodes the allowed ones as tokens.
    assert tok.encode(text, allowed_special={"<|endoftext|>"}, disallowed_special=()) == \
        [64, 100257, 293, *tok.encode_ordinary("<|fim_prefix|>")]


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


# -- arguments: one check for both backends, tiktoken's behaviour where it has one -----------------

# (keyword arguments, text): every policy whose outcome tiktoken 0.14 defines.
POLICY_CASES = [
    ({"disallowed_special": None}, "hi<|endoftext|>"),  # None disallows nothing
    ({"disallowed_special": {"foo"}}, "hi foo"),  # not a special token, in the text: raises
    ({"disallowed_special": ["foo"]}, "hi fo"),  # not in the text: plain encode
    ({"disallowed_special": {""}}, "hi"),  # the empty string is in every text
    ({"allowed_special": {"foo"}}, "hi foo"),  # an allowed name that is not special: ignored
    ({"allowed_special": "all", "disallowed_special": {"<|endoftext|>"}}, "a<|endoftext|>"),  # both: disallowed
    ({"allowed_special": "all", "disallowed_special": {"<|endoftext|>"}}, "a<|fim_prefix|>"),
    ({"allowed_special": {"<|fim_prefix|>"}, "disallowed_special": {"x"}}, "<|fim_prefix|>x"),
    ({"allowed_special": None}, "hi"),
    ({"allowed_special": None, "disallowed_special": ()}, "hi"),
    ({"allowed_special": {1}, "disallowed_special": ()}, "hi"),
    ({"disallowed_special": {1}}, "hi"),
    ({"disallowed_special": 5}, "hi"),
]


def _outcome(call):
    try:
        return call()
    except Exception as exc:
        return exc


@pytest.mark.parametrize("backend", ["python", "native"])
@pytest.mark.parametrize("kwargs, text", POLICY_CASES, ids=[f"{k}-{t}" for k, t in POLICY_CASES])
def test_special_policy_arguments_follow_tiktoken(backend, kwargs, text, tiktoken_oracle):
    """Same ids where tiktoken encodes; where it raises, a typed error that is also its builtin."""
    tok = tokenizer_for("cl100k_base", "auto", backend)
    expected = _outcome(lambda: tiktoken_oracle("cl100k_base").encode(text, **kwargs))
    got = _outcome(lambda: tok.encode(text, **kwargs))
    if isinstance(expected, list):
        assert got == expected
        assert tok.count(text, **kwargs) == len(expected)
        assert tok.encode_batch([text, text], **kwargs) == [expected, expected]
        return
    builtin = ValueError if isinstance(expected, ValueError) else TypeError
    assert isinstance(expected, builtin)
    assert isinstance(got, builtin) and isinstance(got, WordsplitError), repr(got)
    expected_type = DisallowedSpecialError if builtin is ValueError else OptionTypeError
    assert type(got) is expected_type
    # Every method that takes the policy checks it the same way.
    calls = [lambda: tok.count(text, **kwargs), lambda: tok.encode_batch(["ok", text], **kwargs),
             lambda: tok.encode_batch_flat(["ok", text], **kwargs), lambda: tok.explain(text, **kwargs)]
    for call in calls:
        assert type(_outcome(call)) is expected_type


@pytest.mark.parametrize("backend", ["python", "native"])
def test_disallowed_names_that_are_not_special_tokens(backend):
    tok = tokenizer_for("qwen3", "auto", backend)
    with pytest.raises(DisallowedSpecialError, match=r"^text contains 'secret', which disallowed_special lists"):
        tok.encode("no secret here", disallowed_special={"secret"})
    # The first disallowed string in the text is the one named, special or not.
    with pytest.raises(DisallowedSpecialError, match="special token '<\\|im_end\\|>'"):
        tok.encode("a<|im_end|> secret", disallowed_special={"secret", "<|im_end|>"})
    # Added tokens are still matched; the batch reports its first failing text.
    assert tok.encode("<think>x", disallowed_special={"y"}) == tok.encode("<think>x")
    with pytest.raises(DisallowedSpecialError, match="'y'"):
        tok.encode_batch(["x", "y", "<|im_end|>"], disallowed_special={"y"})
    # A bare string is refused (tiktoken would treat each of its characters as a token).
    with pytest.raises(OptionTypeError, match=r"disallowed_special=\{'<\|im_end\|>'\}"):
        tok.encode("x", disallowed_special="<|im_end|>")


NUM_THREADS_CASES = [(-1, OptionValueError), (0, OptionValueError), (1.5, OptionTypeError),
                     ("2", OptionTypeError), (True, OptionTypeError), (None, None), (3, None), (10_000, None)]


@pytest.mark.parametrize("backend", ["python", "native"])
@pytest.mark.parametrize("value, error", NUM_THREADS_CASES, ids=[repr(v) for v, _ in NUM_THREADS_CASES])
def test_num_threads_is_checked_alike_on_both_backends(backend, value, error):
    tok = tokenizer_for("cl100k_base", "auto", backend)
    calls = [
        lambda: TokenizerOptions(backend=backend, num_threads=value).build(tok.vocab).encode_batch(["a"]),
        lambda: tok.encode_batch(["hello", "world"], num_threads=value),
        lambda: tok.encode_batch_flat(["hello", "world"], num_threads=value)[0].tolist(),
        lambda: tok.decode_batch([[15339], [1917]], num_threads=value),
    ]
    for call in calls:
        got = _outcome(call)
        if error is None:
            assert got in ([[64]], [[15339], [14957]], [15339, 14957], ["hello", " world"]), got
        else:
            assert type(got) is error and "num_threads" in str(got), repr(got)
    if error is OptionValueError:
        assert isinstance(_outcome(calls[0]), ValueError)  # as tiktoken's max_workers check
    elif error is OptionTypeError:
        assert isinstance(_outcome(calls[0]), TypeError)


def test_num_threads_beyond_the_limit_is_clamped():
    """num_threads=10_000 on a batch of 600 texts uses at most MAX_THREADS threads, not 600
    (a fresh process: the helper pool is per process and grows to the largest count asked)."""
    import subprocess
    import sys

    script = """if True:
        import os
        from wordsplit import TokenizerOptions, load_vocab
        from wordsplit.tokenizer import MAX_THREADS
        tok = TokenizerOptions(backend="native").build(load_vocab("cl100k_base"))
        threads = lambda: len(os.listdir("/proc/self/task"))
        before = threads()
        texts = [f"text {i} " * 20 for i in range(600)]  # 600 texts, over the 32 KB where helpers start
        assert tok.encode_batch(texts, num_threads=10_000) == [tok.encode(t) for t in texts]
        print(before, threads(), MAX_THREADS)
    """
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    before, after, limit = map(int, out.split())
    assert limit == 256 and before < after <= before + limit - 1


@pytest.mark.parametrize("backend", ["python", "native"])
def test_decode_takes_1d_integer_arrays(backend):
    np = pytest.importorskip("numpy")
    tok = tokenizer_for("cl100k_base", "auto", backend)
    ids = [15339, 1917]
    for dtype in ("int64", "int32", "uint16", "uint32", "uint64"):
        array = np.array(ids, dtype=dtype)
        assert tok.decode(array) == tok.decode(ids) == "hello world"
        assert tok.decode_bytes(array) == b"hello world"
    assert tok.decode(np.array([], dtype="int64")) == ""
    assert tok.decode_batch(np.array([ids, ids])) == ["hello world"] * 2
    assert tok.decode_batch([np.array(ids), ids]) == ["hello world"] * 2
    with pytest.raises(UnknownTokenError, match="token id -1 is outside"):
        tok.decode(np.array([-1]))
    with pytest.raises(UnknownTokenError, match="token id 18446744073709551615 is outside"):
        tok.decode(np.array([2**64 - 1], dtype="uint64"))
    with pytest.raises(DecodeInputError, match=r"1-D sequence of token ids, not a 2-D array \(shape \(1, 2\)\)"):
        tok.decode(np.array([ids]))
    with pytest.raises(DecodeInputError, match="0-D array"):
        tok.decode(np.int64(5) + np.zeros((), dtype="int64"))
    with pytest.raises(DecodeInputError, match="dtype float64"):
        tok.decode(np.array([15339.0]))
    with pytest.raises(DecodeInputError, match="2-D array of token ids .* not a 3-D one"):
        tok.decode_batch(np.zeros((1, 1, 1), dtype="int64"))
    with pytest.raises(DecodeInputError, match="not str"):
        tok.decode("15339")


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_vocabulary_and_its_tokenizers_are_freed_when_dropped(backend):
    """Nothing global keeps a Vocab alive once its tokenizers are gone (its shared merge tables
    held it through a weak-key dictionary whose values referenced their keys)."""
    import gc
    import pickle
    import weakref

    vocab = pickle.loads(pickle.dumps(load_vocab("gpt2")))  # a Vocab object no cache shares
    for encoder in ("auto", "backtrack", "heap-merge"):
        assert TokenizerOptions(encoder=encoder, backend=backend).build(vocab).encode("hello world") == [31373, 995]
    freed = weakref.ref(vocab)
    del vocab
    gc.collect()
    assert freed() is None
