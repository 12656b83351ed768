"""Byte-level BPE vocabularies that lack some single-byte tokens and have an ``unk_token``:
such a byte is the unk token (one per run with ``fuse_unk``), merges never cross it, and ids,
offsets and decode equal HF ``tokenizers``' on both backends and with every encoder.

The tokenizers are built with HF's own API: a small one (its unk token in the model's vocab
only, which makes its merges pair-ranked, or also an added special token, which keeps them
rank-ordered) and Qwen3's tokenizer.json with three bytes and every token holding them removed.
"""

from __future__ import annotations

import gzip
import json
import pickle

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import BACKENDS, DATA, ENCODERS
from wordsplit import TokenizerOptions
from wordsplit.errors import UnsupportedTokenizerError, VocabFormatError
from wordsplit.formats.hf import read_hf_tokenizer_json, token_bytes

tokenizers = pytest.importorskip("tokenizers")
from tokenizers import Tokenizer, decoders, models  # noqa: E402
from tokenizers.pre_tokenizers import ByteLevel  # noqa: E402

CHAR = {token_bytes(c)[0]: c for c in ByteLevel.alphabet()}  # byte → its byte-level character
SMALL_MISSING = b"xyz\xa9\x00"
QWEN_MISSING = b"q\xa9\x00"

TEXTS = [
    "", "abxc", "axxb ab", "xx", "x", "é x", "zab", "abcc xyzab abcxcc", "<unk>", "ééé", "x ab\u00a9y",
    "qué quiet Quebec q", "aq\x00\x00qb", "\x00", "©©© ©x", "hello world, the quick brown fox",
    "日本語 😀 café\u0301 ©2024 naïve", "xyzzy " * 50, "q" * 300, "a" * 200 + "x" + "b" * 200,
]
texts = st.lists(st.one_of(st.sampled_from(["x", "q", "\x00", "©", "é", "ab", "c", " ", "xyz", "abcc", "Qq"]),
                           st.text(max_size=5)), max_size=12).map("".join)


def small_tokenizer(*, fuse: bool, added_unk: bool) -> Tokenizer:
    vocab = {}
    for b in range(256):
        if b not in SMALL_MISSING:
            vocab[CHAR[b]] = len(vocab)
    merges = [("a", "b"), ("ab", "c"), (CHAR[32], "a"), ("c", "c"), (CHAR[32], "ab")]
    for left, right in merges:
        vocab[left + right] = len(vocab)
    vocab["<unk>"] = len(vocab)
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges, unk_token="<unk>", fuse_unk=fuse))
    tok.pre_tokenizer = ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    if added_unk:
        tok.add_special_tokens(["<unk>"])
    return tok


def qwen3_without_bytes(*, fuse: bool) -> Tokenizer:
    """Qwen3's tokenizer.json without the bytes QWEN_MISSING: every token holding one goes, with
    every merge that names or makes one; ``<|unk|>`` is added to the model and as a special token
    (``<unk>`` is one of Qwen3's BPE tokens)."""
    spec = json.loads(gzip.decompress((DATA / "hf" / "tokenizer.json.gz").read_bytes()))
    gone = {CHAR[b] for b in QWEN_MISSING}
    model = spec["model"]
    kept = sorted((i, text) for text, i in model["vocab"].items() if not gone & set(text))
    # Dense ids, in the same order (HF numbers added tokens from the model's vocab size on).
    model["vocab"] = {text: new for new, (_, text) in enumerate(kept)}
    model["merges"] = [m for m in model["merges"] if not gone & set("".join(m))]
    for new, entry in enumerate(spec["added_tokens"], start=len(kept)):
        entry["id"] = new
    unk_id = len(kept) + len(spec["added_tokens"])
    model["vocab"]["<|unk|>"] = unk_id
    model.update(unk_token="<|unk|>", fuse_unk=fuse)
    spec["added_tokens"].append({"id": unk_id, "content": "<|unk|>", "single_word": False, "lstrip": False,
                                 "rstrip": False, "normalized": False, "special": True})
    return Tokenizer.from_str(json.dumps(spec))


CASES = {
    "small": lambda fuse: small_tokenizer(fuse=fuse, added_unk=False),
    "small-added-unk": lambda fuse: small_tokenizer(fuse=fuse, added_unk=True),
    "qwen3-without-bytes": lambda fuse: qwen3_without_bytes(fuse=fuse),
}


@pytest.fixture(scope="module", params=[(name, fuse) for name in CASES for fuse in (False, True)],
                ids=lambda p: f"{p[0]}-{'fused' if p[1] else 'unfused'}")
def pair(request):
    """(HF tokenizer, wordsplit Vocab of the same tokenizer.json)."""
    name, fuse = request.param
    hf = CASES[name](fuse)
    vocab = read_hf_tokenizer_json(hf.to_str().encode(), source=f"{name}.json")
    return hf, vocab


def build(vocab, backend, encoder):
    try:
        return TokenizerOptions(backend=backend, encoder=encoder).build(vocab)
    except UnsupportedTokenizerError:
        # backtrack needs rank order: only the small tokenizer whose unk is in model.vocab alone
        # has pair-ranked merges.
        assert encoder == "backtrack" and vocab.merges is not None
        return None


def test_the_vocabulary_records_its_unk_token(pair):
    hf, vocab = pair
    model = json.loads(hf.to_str())["model"]
    unk = json.loads(hf.to_str())["model"]["unk_token"]
    assert vocab.unk_token_id == hf.token_to_id(unk) and vocab.fuse_unk == model["fuse_unk"]
    assert set(vocab.missing_bytes) in (set(SMALL_MISSING), set(QWEN_MISSING))
    again = pickle.loads(pickle.dumps(vocab))
    assert (again.unk_token_id, again.fuse_unk, again.content_hash) == (vocab.unk_token_id, vocab.fuse_unk,
                                                                        vocab.content_hash)


@pytest.mark.parametrize("encoder", ENCODERS)
@pytest.mark.parametrize("backend", BACKENDS)
def test_ids_offsets_and_decode_equal_hf(pair, backend, encoder):
    hf, vocab = pair
    tok = build(vocab, backend, encoder)
    if tok is None:
        return
    for text in TEXTS:
        expected = hf.encode(text)
        result = tok.encode_with_offsets(text, allowed_special="all")
        assert result.ids == expected.ids, text
        assert result.char_offsets == expected.offsets, text
        assert tok.decode(result.ids) == hf.decode(expected.ids, skip_special_tokens=False), text


@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                    HealthCheck.function_scoped_fixture])
@given(text=texts)
def test_random_text_equals_hf(pair, backend, text):
    hf, vocab = pair
    expected = hf.encode(text)
    tok = TokenizerOptions(backend=backend).build(vocab)
    result = tok.encode_with_offsets(text, allowed_special="all")
    assert (result.ids, result.char_offsets) == (expected.ids, expected.offsets)
    assert tok.decode(result.ids) == hf.decode(expected.ids, skip_special_tokens=False)


def test_fused_and_unfused_runs():
    # The rule itself, on the small tokenizer: "axxb" is a, unk(, unk), b; "abxc" cannot merge abc.
    for fuse, expected in ((False, ["a", "<unk>", "<unk>", "b"]), (True, ["a", "<unk>", "b"])):
        hf = small_tokenizer(fuse=fuse, added_unk=True)
        vocab = read_hf_tokenizer_json(hf.to_str().encode())
        for backend in BACKENDS:
            tok = TokenizerOptions(backend=backend).build(vocab)
            assert [hf.id_to_token(i) for i in tok.encode("axxb")] == expected
            assert [hf.id_to_token(i) for i in tok.encode("abxc")] == ["ab", "<unk>", "c"]
            assert tok.encode_with_offsets("axxb").byte_offsets[1] == (1, 3 if fuse else 2)


def without_bytes_spec(**model_changes) -> bytes:
    spec = json.loads(small_tokenizer(fuse=False, added_unk=False).to_str())
    spec["model"].update(model_changes)
    return json.dumps(spec).encode()


def test_an_unk_token_missing_from_the_vocab_is_refused():
    with pytest.raises(VocabFormatError, match="unk_token '<nope>' is not in model.vocab"):
        read_hf_tokenizer_json(without_bytes_spec(unk_token="<nope>"), source="t.json")


def test_an_unk_token_inside_a_merge_is_refused():
    spec = json.loads(without_bytes_spec())
    spec["model"]["vocab"]["<unk>a"] = max(spec["model"]["vocab"].values()) + 1
    spec["model"]["merges"].append(["<unk>", "a"])
    with pytest.raises(UnsupportedTokenizerError, match="unk_token '<unk>' is part of a merge"):
        read_hf_tokenizer_json(json.dumps(spec).encode(), source="t.json")


def test_without_an_unk_token_the_bytes_are_still_dropped():
    vocab = read_hf_tokenizer_json(without_bytes_spec(unk_token=None))
    hf = Tokenizer.from_str(without_bytes_spec(unk_token=None).decode())
    assert vocab.unk_token_id is None
    for backend in BACKENDS:
        tok = TokenizerOptions(backend=backend).build(vocab)
        for text in TEXTS:
            assert tok.encode(text) == hf.encode(text).ids, text
