"""``wordsplit.compat.tiktoken`` against tiktoken 0.14 itself: the same calls on both, outputs compared.

Every OpenAI encoding, both backends (the registered encodings run natively; the Python
backend is the same ``Encoding`` over a ``backend="python"`` tokenizer). Compared: ids of every
encode method, numpy output, ``encode_with_unstable`` (completions as a set: tiktoken's order
is a hash set's), every decode method (on valid and broken UTF-8), the vocabulary views, the
private methods tiktoken's tests use, exception types, the model tables, pickling, and
plug-in encodings through ``register_vocab``.
"""

from __future__ import annotations

import gzip
import pickle

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import wordsplit.compat.tiktoken as compat
from conftest import BACKENDS, DATA, OPENAI_NAMES, tokenizer_for
from wordsplit import Vocab, register_vocab
from wordsplit.vocabs import VOCABS, forget_loaded

TEXTS = [
    "",
    "hello world",
    "Hello, World! How's it going? I'm fine; they'll see.",
    "hello fanta",
    "  !",
    "a  \n\n   b\t\t\n",
    "trailing spaces   ",
    "\r\n\r\n",
    "\n \n",
    "12345678901234567890 3.14159 1,000,000",
    "def f(x):\n    return x ** 2  # square\n",
    "naïve café résumé Ünïcödé",
    "中文日本語한국어ไทยहिन्दीعربي",
    "😀👍🏽👨‍👩‍👧🇯🇵 emoji",
    "x\u00a0y\u2003z\u3000w",
    "<|endoftext|>",
    "hi<|endoftext|>there",
    "<|fim_prefix|>def f(<|fim_suffix|>)<|fim_middle|>",
    "<|endofprompt|> and <|im_start|>",
    "<|start|>assistant<|channel|>final<|message|>hi<|end|>",
    "<|endoftext",
    "'s 't 're 've 'm 'll 'd 'S 'T",
    "\x00\x01\x1f\x7f",
]


def corpus_sample(size: int = 400) -> list[str]:
    texts = []
    for path in sorted((DATA / "corpus").glob("*.txt.gz")):
        text = gzip.decompress(path.read_bytes()).decode("utf-8")
        texts += [text[i:i + size] for i in range(0, min(len(text), 6 * size), size)]
    return texts


ALL_TEXTS = TEXTS + corpus_sample()


@pytest.fixture(scope="module", params=[(name, backend) for name in OPENAI_NAMES for backend in BACKENDS],
                ids=lambda p: f"{p[0]}-{p[1]}")
def pair(request, tiktoken_oracle):
    """(compat encoding, tiktoken encoding) for one name and backend."""
    name, backend = request.param
    if backend == "native":
        enc = compat.get_encoding(name)
        assert enc.tokenizer.backend == "native"
    else:
        enc = compat.Encoding.from_tokenizer(name, tokenizer_for(name, backend="python"))
    return enc, tiktoken_oracle(name)


def outcome(call):
    """The result of ``call()``, or the exception's tiktoken-visible type."""
    try:
        return ("ok", call())
    except (ValueError, KeyError, TypeError, AssertionError, UnicodeError, OverflowError) as exc:
        return ("raised", exc)


def assert_same(ours, theirs):
    """Same result, or our exception is an instance of the builtin type tiktoken raised."""
    if theirs[0] == "raised":
        assert ours[0] == "raised", f"tiktoken raised {theirs[1]!r}, we returned {ours[1]!r}"
        expected = type(theirs[1])
        assert expected.__module__ == "builtins", f"tiktoken raised {expected!r}: {theirs[1]}"
        # Our errors are wordsplit errors that subclass the builtin tiktoken raised.
        assert isinstance(ours[1], expected), (
            f"tiktoken raised {expected.__name__}, we raised {type(ours[1]).__name__}: {ours[1]}"
        )
    else:
        assert ours == theirs


# -- encode -------------------------------------------------------------------------------------


POLICIES = [
    {},
    {"allowed_special": "all"},
    {"disallowed_special": ()},
    {"allowed_special": {"<|endoftext|>"}},
    {"allowed_special": {"<|endoftext|>"}, "disallowed_special": ()},
    {"disallowed_special": ["<|endoftext|>"]},
    {"allowed_special": "all", "disallowed_special": ()},
    {"disallowed_special": ("<|endoftext|>", "hello")},  # a non-special string is searched for too
]


@pytest.mark.parametrize("policy", POLICIES, ids=repr)
def test_encode_matches(pair, policy):
    enc, oracle = pair
    for text in ALL_TEXTS:
        assert_same(outcome(lambda: enc.encode(text, **policy)), outcome(lambda: oracle.encode(text, **policy)))


def test_encode_ordinary_and_batches_match(pair):
    enc, oracle = pair
    for text in ALL_TEXTS:
        assert enc.encode_ordinary(text) == oracle.encode_ordinary(text), text
    assert enc.encode_ordinary_batch(ALL_TEXTS) == oracle.encode_ordinary_batch(ALL_TEXTS)
    assert enc.encode_ordinary_batch(ALL_TEXTS, num_threads=2) == oracle.encode_ordinary_batch(ALL_TEXTS, num_threads=2)
    for policy in POLICIES:
        assert_same(outcome(lambda: enc.encode_batch(ALL_TEXTS, **policy)),
                    outcome(lambda: oracle.encode_batch(ALL_TEXTS, **policy)))


@pytest.mark.parametrize("policy", POLICIES[:4], ids=repr)
def test_encode_to_numpy_matches(pair, policy):
    import numpy as np

    enc, oracle = pair
    for text in ALL_TEXTS:
        ours = outcome(lambda: enc.encode_to_numpy(text, **policy))
        theirs = outcome(lambda: oracle.encode_to_numpy(text, **policy))
        if theirs[0] == "ok":
            assert ours[0] == "ok"
            assert ours[1].dtype == theirs[1].dtype == np.uint32
            assert ours[1].flags.writeable == theirs[1].flags.writeable
            assert np.array_equal(ours[1], theirs[1])
        else:
            assert_same(ours, theirs)


UNSTABLE_TEXTS = ["hello fanta", "hello", "  !", "a\n\n", "I'm", "12", "中文", "hi<|endoftext|>",
                  "<|endoftext|>", "", "naïve caf", "😀", "3.1", " x\t", "a \u3000"]
# Ending in spaces: ~100k completions (every token that starts with a space), so only natively,
# on one vocabulary of each pattern family (GPT-2's \s+(?!\S), cl100k's \s*[\r\n]+).
SPACE_ENDED = ["x  ", "def f(x):\n    "]
SPACE_ENDED_ON = ("gpt2", "cl100k_base")


def test_encode_with_unstable_matches(pair):
    enc, oracle = pair
    space_ended = enc.tokenizer.backend == "native" and enc.name in SPACE_ENDED_ON
    for text in UNSTABLE_TEXTS + (SPACE_ENDED if space_ended else []):
        for policy in ({}, {"allowed_special": "all"}):
            ours = outcome(lambda: enc.encode_with_unstable(text, **policy))
            theirs = outcome(lambda: oracle.encode_with_unstable(text, **policy))
            if theirs[0] == "ok":
                assert ours[0] == "ok"
                assert ours[1][0] == theirs[1][0], text
                assert {tuple(s) for s in ours[1][1]} == {tuple(s) for s in theirs[1][1]}, text
                assert all(type(s) is list for s in ours[1][1])
            else:
                assert_same(ours, theirs)


def test_encode_single_token_matches(pair):
    enc, oracle = pair
    for piece in ["hello", b"hello", " world", b"\xe2", "<|endoftext|>", b"<|endoftext|>", "hello world", "",
                  "\u0100\u0100\u0100"]:
        assert_same(outcome(lambda: enc.encode_single_token(piece)), outcome(lambda: oracle.encode_single_token(piece)))


def test_private_encoders_match(pair):
    enc, oracle = pair
    for text in [t for t in TEXTS if t] + ["helloqqqq", "   hello"]:  # tiktoken panics on an empty piece
        assert enc._encode_single_piece(text) == oracle._encode_single_piece(text), text
        assert enc._encode_single_piece(text.encode("utf-8")) == oracle._encode_single_piece(text.encode("utf-8"))
        assert enc._encode_only_native_bpe(text) == oracle._encode_only_native_bpe(text), text
        data = text.encode("utf-8")
        for cut in {len(data), len(data) - 1, len(data) // 2}:
            broken = data[:max(cut, 0)] + b"\xe2\x80"
            assert enc._encode_bytes(broken) == oracle._encode_bytes(broken), broken
            assert enc._encode_bytes(data[:max(cut, 0)]) == oracle._encode_bytes(data[:max(cut, 0)])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=40))
def test_encode_bytes_matches_on_random_bytes(data, tiktoken_oracle):
    for name in ("cl100k_base", "o200k_base", "r50k_base"):
        assert compat.get_encoding(name)._encode_bytes(data) == tiktoken_oracle(name)._encode_bytes(data)


TEXT_PIECES = st.sampled_from(
    ["<|endoftext|>", "<|fim_prefix|>", " ", "  ", "\n", "'s", "hello", "123", "é", "😀", "\u3000"]
)
RANDOM_TEXTS = st.lists(st.one_of(st.text(max_size=12), TEXT_PIECES), max_size=6).map("".join)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=RANDOM_TEXTS)
def test_random_text_matches(text, tiktoken_oracle):
    for name in OPENAI_NAMES:
        enc, oracle = compat.get_encoding(name), tiktoken_oracle(name)
        assert enc.encode(text, allowed_special="all") == oracle.encode(text, allowed_special="all")
        assert enc.encode_ordinary(text) == oracle.encode_ordinary(text)
        assert_same(outcome(lambda: enc.encode(text)), outcome(lambda: oracle.encode(text)))


# -- decode -------------------------------------------------------------------------------------


def id_sequences(enc) -> list[list[int]]:
    """Valid text, broken UTF-8 (a character cut between tokens), special tokens, empty."""
    seqs = [enc.encode(text, allowed_special="all") for text in TEXTS]
    multi = enc.encode("😀中")
    seqs += [multi[:1], multi[1:], multi[:-1], [], [enc.eot_token]]
    byte_ids = [enc.encode_single_token(bytes([b])) for b in (0xE2, 0x80, 0xF0, 0x41, 0xFF)]
    seqs += [byte_ids, byte_ids[:2], byte_ids[2:]]
    return seqs


def test_decode_matches(pair):
    enc, oracle = pair
    for ids in id_sequences(oracle):
        assert enc.decode_bytes(ids) == oracle.decode_bytes(ids)
        for errors in ("replace", "strict", "ignore", "backslashreplace", "surrogateescape"):
            assert_same(outcome(lambda: enc.decode(ids, errors=errors)),
                        outcome(lambda: oracle.decode(ids, errors=errors)))
        assert enc.decode(ids) == oracle.decode(ids)
        assert enc.decode_tokens_bytes(ids) == oracle.decode_tokens_bytes(ids)
        assert_same(outcome(lambda: enc.decode_with_offsets(ids)), outcome(lambda: oracle.decode_with_offsets(ids)))
    batch = id_sequences(oracle)
    assert enc.decode_batch(batch) == oracle.decode_batch(batch)
    expected = oracle.decode_batch(batch, errors="ignore", num_threads=2)
    assert enc.decode_batch(batch, errors="ignore", num_threads=2) == expected
    assert enc.decode_bytes_batch(batch) == oracle.decode_bytes_batch(batch)


def test_decode_errors_match(pair):
    enc, oracle = pair
    for bad in (oracle.max_token_value + 1, 10**9, "a", 1.5, None):
        assert_same(outcome(lambda: enc.decode_bytes([bad])), outcome(lambda: oracle.decode_bytes([bad])))
        assert_same(outcome(lambda: enc.decode([15, bad])), outcome(lambda: oracle.decode([15, bad])))
    for bad in (oracle.max_token_value + 1, 10**9):
        assert_same(outcome(lambda: enc.decode_single_token_bytes(bad)),
                    outcome(lambda: oracle.decode_single_token_bytes(bad)))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_random_ids_decode_the_same(data, tiktoken_oracle):
    name = data.draw(st.sampled_from(OPENAI_NAMES))
    enc, oracle = compat.get_encoding(name), tiktoken_oracle(name)
    valid = st.one_of(st.integers(0, 50255), st.sampled_from(sorted(oracle._special_token_values)))
    ids = data.draw(st.lists(valid, max_size=12))
    assert enc.decode_bytes(ids) == oracle.decode_bytes(ids)
    assert enc.decode(ids) == oracle.decode(ids)
    assert_same(outcome(lambda: enc.decode_with_offsets(ids)), outcome(lambda: oracle.decode_with_offsets(ids)))


# -- vocabulary views and attributes ------------------------------------------------------------


def test_attributes_match(pair):
    enc, oracle = pair
    assert enc.name == oracle.name
    assert repr(enc) == repr(oracle)
    assert enc._pat_str == oracle._pat_str
    assert enc._special_tokens == oracle._special_tokens
    assert enc._mergeable_ranks == oracle._mergeable_ranks
    assert enc.max_token_value == oracle.max_token_value
    assert enc.n_vocab == oracle.n_vocab
    assert enc.eot_token == oracle.eot_token
    assert enc.special_tokens_set == oracle.special_tokens_set
    assert type(enc.special_tokens_set) is set
    assert enc.token_byte_values() == oracle.token_byte_values()
    for token in [0, 15, 50256, oracle.eot_token, oracle.max_token_value, oracle.max_token_value + 1, -1]:
        assert enc.is_special_token(token) == oracle.is_special_token(token)
    assert_same(outcome(lambda: enc.is_special_token("<|endoftext|>")),
                outcome(lambda: oracle.is_special_token("<|endoftext|>")))


# -- registry, models, errors -------------------------------------------------------------------


def test_model_tables_equal_tiktokens(tiktoken_oracle):
    import tiktoken.model as model
    assert list(compat.MODEL_TO_ENCODING.items()) == list(model.MODEL_TO_ENCODING.items())
    assert list(compat.MODEL_PREFIX_TO_ENCODING.items()) == list(model.MODEL_PREFIX_TO_ENCODING.items())


@pytest.mark.parametrize("model_name", ["gpt-4o", "gpt-4o-2024-05-13", "gpt-4", "gpt-4-0314", "gpt-4.1-mini",
                                        "gpt-5", "gpt-5-mini", "o1", "o1-preview", "o3-mini", "o4-mini-high",
                                        "gpt-oss-120b", "gpt2", "gpt-2", "ft:gpt-4o:org", "text-davinci-003",
                                        "code-davinci-edit-001", "gpt-3.5-turbo-16k", "nope", "", "GPT-4"])
def test_model_lookup_matches(model_name, tiktoken_oracle):
    import tiktoken

    assert_same(outcome(lambda: compat.encoding_name_for_model(model_name)),
                outcome(lambda: tiktoken.encoding_name_for_model(model_name)))
    theirs = outcome(lambda: tiktoken.encoding_for_model(model_name))
    ours = outcome(lambda: compat.encoding_for_model(model_name))
    if theirs[0] == "ok":
        assert ours[0] == "ok" and ours[1].name == theirs[1].name
        assert ours[1] is compat.get_encoding(theirs[1].name)
    else:
        assert_same(ours, theirs)


def test_names_and_lookup_errors(tiktoken_oracle):
    import tiktoken

    assert compat.list_encoding_names()[:len(OPENAI_NAMES)] == tiktoken.list_encoding_names()
    assert "qwen3" in compat.list_encoding_names()
    assert compat.get_encoding("gpt2").name == "gpt2"
    assert compat.get_encoding("gpt2") is compat.get_encoding("gpt2")
    for bad in ("nope", "cl100k", 5, None, "hf:Qwen/Qwen3-0.6B", str(DATA / "hf" / "tokenizer.json.gz")):
        assert_same(outcome(lambda: compat.get_encoding(bad)), outcome(lambda: tiktoken.get_encoding(bad)))
    with pytest.raises(ValueError, match="cl100k_base"):  # the message suggests the close name
        compat.get_encoding("cl100k")


def test_encode_input_errors_match(pair):
    enc, oracle = pair
    for bad in (b"hello", None, 5):
        assert_same(outcome(lambda: enc.encode(bad)), outcome(lambda: oracle.encode(bad)))
        assert_same(outcome(lambda: enc.encode_ordinary(bad)), outcome(lambda: oracle.encode_ordinary(bad)))
    assert_same(outcome(lambda: enc.encode("x", allowed_special="<|endoftext|>")),
                outcome(lambda: oracle.encode("x", allowed_special="<|endoftext|>")))


def test_lone_surrogates_match(pair):
    enc, oracle = pair
    for text in ["a\ud800b", "\udfff", "x\ud83d\ude00y"]:
        assert enc.encode(text) == oracle.encode(text)
        assert enc.encode_ordinary(text) == oracle.encode_ordinary(text)


# -- constructing encodings ---------------------------------------------------------------------


def test_custom_encoding_matches(tiktoken_oracle):
    import tiktoken

    base = tiktoken_oracle("cl100k_base")
    specials = {**base._special_tokens, "<|im_start|>": 100264, "<|im_end|>": 100265}
    args = dict(pat_str=base._pat_str, mergeable_ranks=base._mergeable_ranks, special_tokens=specials)
    ours, theirs = compat.Encoding("cl100k_im", **args), tiktoken.Encoding("cl100k_im", **args)
    for text in ALL_TEXTS + ["<|im_start|>user\nhi<|im_end|>"]:
        assert_same(outcome(lambda: ours.encode(text, allowed_special="all")),
                    outcome(lambda: theirs.encode(text, allowed_special="all")))
        assert_same(outcome(lambda: ours.encode(text)), outcome(lambda: theirs.encode(text)))
    assert ours.max_token_value == theirs.max_token_value == 100276  # <|endofprompt|>
    assert ours._mergeable_ranks is base._mergeable_ranks
    # explicit_n_vocab is checked (with an assert in tiktoken)
    ok = len(base._mergeable_ranks) + len(base._special_tokens)
    for n in (ok, ok + 1):
        small = dict(pat_str=base._pat_str, mergeable_ranks=base._mergeable_ranks,
                     special_tokens=base._special_tokens, explicit_n_vocab=n)
        assert_same(outcome(lambda: compat.Encoding("c", **small).n_vocab),
                    outcome(lambda: tiktoken.Encoding("c", **small).n_vocab))


def test_registered_encoding_pickles_by_name():
    enc = compat.get_encoding("cl100k_base")
    data = pickle.dumps(enc)
    assert len(data) < 200  # the name, not the 100k ranks
    again = pickle.loads(data)
    assert again.name == "cl100k_base" and again.encode("hello world") == [15339, 1917]
    assert again._tokenizer is enc._tokenizer


def test_custom_encoding_pickles_by_value():
    base = compat.get_encoding("gpt2")
    enc = compat.Encoding("gpt2_im", pat_str=base._pat_str, mergeable_ranks=base._mergeable_ranks,
                          special_tokens={**base._special_tokens, "<|im_start|>": 50257})
    again = pickle.loads(pickle.dumps(enc))
    assert again.name == "gpt2_im" and again._special_tokens == enc._special_tokens
    assert again.encode("<|im_start|>hi there", allowed_special="all") == [50257, 5303, 612]


def test_plugin_vocab_is_an_encoding():
    base = compat.get_encoding("r50k_base")
    ranks = {piece: i for piece, i in base._mergeable_ranks.items() if i < 1000}

    def factory():
        return Vocab(name="compat-small", ranks=ranks, pattern=base._pat_str, special_tokens={"<|endoftext|>": 1000})

    register_vocab("compat-small", factory)
    try:
        assert "compat-small" in compat.list_encoding_names()
        enc = compat.get_encoding("compat-small")
        assert enc.name == "compat-small" and enc.n_vocab == 1001 and enc.eot_token == 1000
        assert enc.decode(enc.encode("hello world<|endoftext|>", allowed_special="all")) == "hello world<|endoftext|>"
        assert pickle.loads(pickle.dumps(enc)) .__dict__["_tokenizer"] is enc._tokenizer
    finally:
        VOCABS.remove("compat-small")
        forget_loaded()
        compat._ENCODINGS.pop("compat-small", None)


def test_qwen3_encoding(hf_qwen3):
    enc = compat.get_encoding("qwen3")
    text = "<|im_start|>user\n<think>hi</think> Café ①②<|im_end|>"
    assert enc.encode(text, allowed_special="all") == hf_qwen3.encode(text, add_special_tokens=False).ids
    assert enc.eot_token == 151643  # tiktoken's eot_token is <|endoftext|>, whatever the eos
    assert enc.n_vocab == 151669
