"""The two engines behind Tokenizer: the same ids, and the same errors word for word.

The native engine raises every error itself, with its final message; these tests hold the
Python engine (the reference) and the native one to the same words.
"""

from __future__ import annotations

import numpy as np
import pytest

from conftest import tokenizer_for
from wordsplit import TokenizerOptions, load_vocab

BAD_CALLS = {
    "encode bytes": lambda tok: tok.encode(b"hello"),
    "encode None": lambda tok: tok.encode(None),
    "encode disallowed": lambda tok: tok.encode("a <|endoftext|> b"),
    "encode disallowed after allowed": lambda tok: tok.encode("<|fim_prefix|><|endoftext|>",
                                                              allowed_special={"<|fim_prefix|>"}),
    "count disallowed": lambda tok: tok.count("<|endofprompt|>"),
    "batch item": lambda tok: tok.encode_batch(["ok", "fine", b"bytes", 3]),
    "batch disallowed, lowest index": lambda tok: tok.encode_batch(
        ["x" * 40000, "<|fim_suffix|>", "<|endoftext|>" * 3, "y" * 40000], num_threads=2),
    "flat batch item": lambda tok: tok.encode_batch_flat(["ok", None]),
    "decode str item": lambda tok: tok.decode([1, "2"]),
    "decode float": lambda tok: tok.decode([1.0]),
    "decode negative": lambda tok: tok.decode([-1]),
    "decode huge": lambda tok: tok.decode([2**70]),
    "decode numpy negative": lambda tok: tok.decode(np.array([-1])),
    "decode 2-D array": lambda tok: tok.decode(np.array([[1, 2]])),
    "decode unused id": lambda tok: tok.decode([100256]),
    "decode_bytes outside": lambda tok: tok.decode_bytes([100277]),
    "decode_batch": lambda tok: tok.decode_batch([[1], [2], [100261], [-5]]),
    "id_to_token": lambda tok: tok.id_to_token(100300),
    "strict decode": lambda tok: tok.decode([tok.token_to_id(b"\xff")], errors="strict"),
    "decode float array": lambda tok: tok.decode(np.array([1.5])),
    "decode str": lambda tok: tok.decode("15339"),
    "decode_batch 3-D array": lambda tok: tok.decode_batch(np.zeros((2, 2, 2), dtype=np.int64)),
    "num_threads negative": lambda tok: tok.encode_batch(["a"], num_threads=-1),
    "num_threads float": lambda tok: tok.encode_batch_flat(["a"], num_threads=1.5),
    "num_threads str": lambda tok: tok.decode_batch([[1]], num_threads="2"),
    "allowed_special None": lambda tok: tok.encode("a", allowed_special=None),
    "disallowed not special": lambda tok: tok.encode("a foo", disallowed_special={"foo"}),
    "disallowed item type": lambda tok: tok.count("a", disallowed_special=[1]),
    "encode_ordinary bytes": lambda tok: tok.encode_ordinary(b"hello"),
    "encode_to_numpy None": lambda tok: tok.encode_to_numpy(None),
    "encode_to_numpy disallowed": lambda tok: tok.encode_to_numpy("<|endoftext|>"),
    "ordinary encode_to_numpy bytes": lambda tok: tok.encode_to_numpy(b"x", disallowed_special=()),
    "count bytes": lambda tok: tok.count(b"hello"),
    "allowed all, bytes": lambda tok: tok.encode(b"hello", allowed_special="all"),
}


def outcome(call, tok):
    try:
        return "ok", call(tok)
    except Exception as exc:  # the type and the words are what is compared
        return type(exc).__name__, str(exc)


@pytest.mark.parametrize("name", list(BAD_CALLS))
def test_both_engines_raise_the_same_error(name):
    native, python = (tokenizer_for("cl100k_base", "auto", backend) for backend in ("native", "python"))
    got = outcome(BAD_CALLS[name], native)
    assert got[0] != "ok", got
    assert got == outcome(BAD_CALLS[name], python)


def test_error_messages_say_what_to_do():
    tok = tokenizer_for("cl100k_base", "auto", "native")
    assert outcome(BAD_CALLS["encode bytes"], tok) == (
        "EncodeInputError", "encode takes a str, not bytes (decode bytes to str first, e.g. data.decode('utf-8'))")
    assert outcome(BAD_CALLS["batch item"], tok)[1].startswith("text 2 of the batch is a bytes, not a str")
    kind, message = outcome(BAD_CALLS["batch disallowed, lowest index"], tok)
    assert kind == "DisallowedSpecialError" and "'<|fim_suffix|>'" in message and "disallowed_special=()" in message
    assert outcome(BAD_CALLS["decode negative"], tok) == (
        "UnknownTokenError", "token id -1 is outside the vocabulary 'cl100k_base' (ids 0..100276)")
    assert outcome(BAD_CALLS["decode unused id"], tok) == (
        "UnknownTokenError", "token id 100256 is unused in the vocabulary 'cl100k_base'")


@pytest.mark.parametrize("backend", ["native", "python"])
def test_surrogates_are_fixed_as_tiktoken_does(backend):
    tok = tokenizer_for("cl100k_base", "auto", backend)
    assert tok.encode("a\ud800b") == tok.encode("a\ufffdb")
    assert tok.encode("\ud83d\ude00") == tok.encode("😀")
    assert tok.encode_batch(["a\ud800b", "\ud83d\ude00"]) == [tok.encode("a\ufffdb"), tok.encode("😀")]


def test_explain_traces_the_tokenizers_own_components():
    """explain runs the Python engine with the tokenizer's spanner and encoder, so its ids are
    the tokenizer's whatever the backend."""
    for backend in ("native", "python"):
        tok = TokenizerOptions(encoder="backtrack", backend=backend).build(load_vocab("qwen3"))
        expl = tok.explain("hello <think> wörld  ")
        assert expl.ids == tok.encode("hello <think> wörld  ")
        assert [p.kind for p in expl.pieces] == ["bpe", "bpe", "added", "bpe", "bpe"]


# Each way of spelling a policy: the defaults, the three that a tokenizer binds once (defaults,
# allowed_special="all", disallowed_special=() and its other spellings) and ones it resolves
# per call.
POLICIES = [
    {},
    {"allowed_special": "all"},
    {"disallowed_special": ()},
    {"disallowed_special": None},
    {"allowed_special": set(), "disallowed_special": []},
    {"allowed_special": {"<|fim_prefix|>"}},
    {"allowed_special": {"<|fim_prefix|>"}, "disallowed_special": ()},
    {"disallowed_special": {"<|endoftext|>"}},
]


@pytest.mark.parametrize("backend", ["native", "python"])
@pytest.mark.parametrize("policy", POLICIES, ids=repr)
def test_every_policy_encodes_as_the_engine_does(backend, policy):
    """encode, encode_to_numpy and count under a policy give what the engine's general call
    gives under the resolved policy, on short texts (encoded with the GIL held) and long ones."""
    tok = tokenizer_for("cl100k_base", "auto", backend)
    resolved = tok._resolve(policy.get("allowed_special", frozenset()), policy.get("disallowed_special", "all"))
    for text in ["hello <|fim_prefix|> world", "héllo wörld, " * 100 + "<|fim_prefix|>"]:
        outcomes = [outcome(lambda t: t.encode(text, **policy), tok),
                    outcome(lambda t: t.encode_to_numpy(text, **policy).tolist(), tok),
                    outcome(lambda t: [None] * t.count(text, **policy), tok)]
        expected = outcome(lambda t: t._engine.encode(text, resolved.allowed, resolved.disallowed), tok)
        assert outcomes[0] == outcomes[1] == expected
        assert outcomes[2][0] == expected[0]
        if expected[0] == "ok":
            assert len(outcomes[2][1]) == len(expected[1])


def test_bound_calls_are_the_engines_own():
    """A tokenizer binds its common policies once; encode_ordinary is the ordinary policy's."""
    tok = tokenizer_for("cl100k_base", "auto", "native")
    calls = tok._engine.bind(frozenset(), frozenset())
    assert type(calls).__name__ == "PolicyCalls"
    text = "hello <|endoftext|> world"
    assert calls.encode(text) == tok.encode_ordinary(text) == tok.encode(text, disallowed_special=())
    assert calls.encode_numpy(text).tolist() == calls.encode(text)
    assert calls.count(text) == len(calls.encode(text)) == 8
