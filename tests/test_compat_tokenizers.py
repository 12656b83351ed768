"""``wordsplit.compat.tokenizers`` against HF ``tokenizers`` itself: Qwen3's tokenizer.json, a
GPT-2 tokenizer.json built here with HF's API (GPT-2's real configuration: ByteLevel
pre-tokenizer without prefix space, ByteLevel decoder, ByteLevel post-processor trimming
offsets), and variants with other post-processors (a Llama-3-style BOS template after
ByteLevel, a BOS/EOS template, RoBERTa's, BERT's, none). Every attribute of every encoding must be
equal, on both backends."""

from __future__ import annotations

import functools
import gzip
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer as HFTokenizer
from tokenizers import decoders as hf_decoders
from tokenizers import models, pre_tokenizers, processors

from conftest import BACKENDS, DATA
from http_server import HF_TOKEN
from wordsplit import TokenizerOptions
from wordsplit.compat.tokenizers import Tokenizer
from wordsplit.compat.tokenizers.decoders import DecodeStream
from wordsplit.errors import DownloadError, EncodeInputError, UnsupportedTokenizerError

PIECES = [
    "Hello", " world", "  ", "   \n\n ", "\t", " \u3000 ", "日本語", "😀", "👩\u200d👩\u200d👧", " 🦀x", "e\u0301",
    "a\u0323\u0301", "\u1e0b\u0323", "\u212b", "\u1100\u1161\u11a8", "123", "don't", " <|im_end|>", "<|endoftext|>",
    "<think>", "é", "ß", "  x  ", "\u00a0y",
]
texts = st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=5)), max_size=8).map("".join)


@functools.lru_cache(maxsize=None)
def hf_json(name: str) -> str:
    """The tokenizer.json of each file under test, built with HF's API."""
    if name == "qwen3":
        return gzip.decompress((DATA / "hf" / "tokenizer.json.gz").read_bytes()).decode("utf-8")
    if name == "gpt2":
        encoder = json.loads(gzip.decompress((DATA / "hf" / "gpt2-encoder.json.gz").read_bytes()))
        lines = gzip.decompress((DATA / "hf" / "gpt2-vocab.bpe.gz").read_bytes()).decode("utf-8").split("\n")
        merges = [tuple(line.split(" ")) for line in lines[1:] if line]
        tok = HFTokenizer(models.BPE(vocab=encoder, merges=merges))
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tok.decoder = hf_decoders.ByteLevel()
        tok.post_processor = processors.ByteLevel(trim_offsets=True)
        tok.add_special_tokens(["<|endoftext|>"])
        return tok.to_str()
    base, _, variant = name.partition("+")
    tok = HFTokenizer.from_str(hf_json(base))
    bos = "<|endoftext|>" if base == "gpt2" else "<|im_start|>"
    bos_id = tok.token_to_id(bos)
    if variant == "llama3":  # Llama 3's: ByteLevel (no trimming), then a BOS template
        tok.post_processor = processors.Sequence([
            processors.ByteLevel(trim_offsets=False),
            processors.TemplateProcessing(single=f"{bos} $A", pair=f"{bos} $A {bos}:1 $B:1",
                                          special_tokens=[(bos, bos_id)]),
        ])
    elif variant == "bos-eos":
        eos = "<|im_end|>"
        tok.post_processor = processors.TemplateProcessing(
            single=f"{bos} $A {eos}", pair=f"{bos} $A {eos} $B:1 {eos}:1",
            special_tokens=[(bos, bos_id), (eos, tok.token_to_id(eos))])
    elif variant == "trim-then-template":  # ByteLevel trimming, then a BOS/EOS template
        tok.post_processor = processors.Sequence([
            processors.ByteLevel(trim_offsets=True),
            processors.TemplateProcessing(single=f"{bos} $A {bos}", pair=f"$A {bos} $B:1",
                                          special_tokens=[(bos, bos_id)]),
        ])
    elif variant == "roberta":
        tok.post_processor = processors.RobertaProcessing((bos, bos_id), (bos, bos_id), trim_offsets=True,
                                                          add_prefix_space=False)
    elif variant == "bert":
        tok.post_processor = processors.BertProcessing((bos, bos_id), (bos, bos_id))
    elif variant == "none":
        spec = json.loads(tok.to_str())
        spec["post_processor"] = None
        return json.dumps(spec)
    else:
        raise AssertionError(name)
    return tok.to_str()


FILES = ["qwen3", "gpt2", "gpt2+llama3", "qwen3+bos-eos", "gpt2+trim-then-template", "gpt2+roberta", "qwen3+bert",
         "gpt2+none"]


@functools.lru_cache(maxsize=None)
def ours(name: str, backend: str = "native") -> Tokenizer:
    return Tokenizer.from_str(hf_json(name), options=TokenizerOptions(backend=backend))


@functools.lru_cache(maxsize=None)
def theirs(name: str) -> HFTokenizer:
    return HFTokenizer.from_str(hf_json(name))


def assert_same(mine, hf):
    assert len(mine) == len(hf)
    for attribute in ("ids", "tokens", "offsets", "attention_mask", "special_tokens_mask", "type_ids", "word_ids",
                      "sequence_ids", "n_sequences"):
        assert getattr(mine, attribute) == getattr(hf, attribute), attribute


@pytest.mark.parametrize("name", FILES)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=texts, pair=st.one_of(st.none(), texts), add_special_tokens=st.booleans())
def test_encode_matches_hf(name, text, pair, add_special_tokens):
    hf = theirs(name).encode(text, pair, add_special_tokens=add_special_tokens)
    assert_same(ours(name).encode(text, pair, add_special_tokens=add_special_tokens), hf)


@pytest.mark.parametrize("name", ["qwen3", "gpt2"])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=texts)
def test_python_backend_matches_hf(name, text):
    assert_same(ours(name, "python").encode(text), theirs(name).encode(text))


@pytest.mark.parametrize("name", ["qwen3", "gpt2+llama3"])
def test_fixed_cases(name):
    cases = ["Hello world", "  leading and trailing  ", "日本語のテキスト 😀👍🏽", "cafe\u0301 naïve", "a\n\n\tb",
             "<|im_end|><|endoftext|>x", "", " ", "<think>\nplan\n</think>\n\nanswer"]
    for text in cases:
        assert_same(ours(name).encode(text), theirs(name).encode(text))
    batch = [cases[0], (cases[1], cases[2]), cases[3]]
    for mine, hf in zip(ours(name).encode_batch(batch), theirs(name).encode_batch(batch)):
        assert_same(mine, hf)
    words = ["Hello", " wor", "ld", "日本", "<|endoftext|>"]
    assert_same(ours(name).encode(words, is_pretokenized=True), theirs(name).encode(words, is_pretokenized=True))
    assert_same(ours(name).encode(words, ["x", "y"], is_pretokenized=True),
                theirs(name).encode(words, ["x", "y"], is_pretokenized=True))


@pytest.mark.parametrize("name", FILES)
def test_special_token_counts_and_post_process(name):
    for is_pair in (False, True):
        assert ours(name).num_special_tokens_to_add(is_pair) == theirs(name).num_special_tokens_to_add(is_pair)
    mine = ours(name).post_process(ours(name).encode(" a b", add_special_tokens=False))
    assert_same(mine, theirs(name).post_process(theirs(name).encode(" a b", add_special_tokens=False)))


def valid_ids(name):
    tok = ours(name)
    n = tok.get_vocab_size()
    return st.lists(st.one_of(st.integers(0, n - 1), st.sampled_from(sorted(tok.get_vocab().values())[-30:])),
                    max_size=12)


@pytest.mark.parametrize("name", ["qwen3", "gpt2", "gpt2+none"])
@settings(max_examples=150, deadline=None)
@given(data=st.data(), skip=st.booleans())
def test_decode_matches_hf(name, data, skip):
    ids = data.draw(valid_ids(name))
    assert ours(name).decode(ids, skip_special_tokens=skip) == theirs(name).decode(ids, skip_special_tokens=skip)
    batch = [ids, ids[:3]]
    assert ours(name).decode_batch(batch, skip) == theirs(name).decode_batch(batch, skip_special_tokens=skip)


@pytest.mark.parametrize("name", ["qwen3", "gpt2"])
@settings(max_examples=100, deadline=None)
@given(data=st.data(), skip=st.booleans(), prefill=st.integers(0, 3))
def test_decode_stream_matches_hf(name, data, skip, prefill):
    from tokenizers.decoders import DecodeStream as HFDecodeStream

    ids = data.draw(st.one_of(valid_ids(name), texts.map(lambda t: theirs(name).encode(t).ids)))
    head, tail = ids[:prefill], ids[prefill:]
    mine = DecodeStream(ids=head or None, skip_special_tokens=skip)
    hf = HFDecodeStream(ids=head or None, skip_special_tokens=skip)
    for token in tail:
        assert mine.step(ours(name), token) == hf.step(theirs(name), token)


@pytest.mark.parametrize("backend", BACKENDS)
def test_added_tokens_in_byte_level_characters(backend, tmp_path):
    """An added token spelled only in byte-level characters ("ĉĊ" stands for a tab and a newline):
    HF's decode passes its text through the ByteLevel decoder, and the drop-in does the same;
    the core Tokenizer decodes every literal as its text, so decode(encode(text)) == text."""
    from wordsplit import load_vocab

    hf = HFTokenizer.from_str(hf_json("qwen3"))
    contents = ["ĉĊĉĊĉĊĉ", "Ãcafé", "Ġwordsplitxq"]
    hf.add_tokens(contents)
    path = tmp_path / "tokenizer.json"
    hf.save(str(path))
    mine = Tokenizer.from_file(path)
    core = TokenizerOptions(backend=backend).build(load_vocab(path))
    for content in contents:
        text = f"say {content} now"
        ids = hf.encode(text).ids
        assert mine.encode(text).ids == core.encode(text) == ids
        assert mine.decode(ids) == hf.decode(ids) != text
        assert core.decode(ids) == text


@pytest.mark.parametrize("name", ["qwen3", "gpt2"])
def test_vocabulary_lookups(name):
    mine, hf = ours(name), theirs(name)
    assert mine.get_vocab() == hf.get_vocab()
    assert mine.get_vocab(with_added_tokens=False) == hf.get_vocab(with_added_tokens=False)
    for added in (True, False):
        assert mine.get_vocab_size(added) == hf.get_vocab_size(with_added_tokens=added)
    for token in ["Ġworld", "<|endoftext|>", "<think>", "hello", "not a token", "Ġ"]:
        assert mine.token_to_id(token) == hf.token_to_id(token)
    for i in [0, 255, 1879, 50256, 151645, 151667, 10**7]:
        assert mine.id_to_token(i) == hf.id_to_token(i)


def test_encode_special_tokens_flag():
    mine, hf = Tokenizer.from_str(hf_json("qwen3")), HFTokenizer.from_str(hf_json("qwen3"))
    mine.encode_special_tokens = hf.encode_special_tokens = True
    text = "a<|im_end|><think>b"
    assert_same(mine.encode(text), hf.encode(text))


def test_from_file_and_save(tmp_path):
    path = tmp_path / "tokenizer.json"
    ours("gpt2").save(path)
    loaded = Tokenizer.from_file(path)
    assert_same(loaded.encode("hi there"), theirs("gpt2").encode("hi there"))
    assert Tokenizer.from_buffer(hf_json("gpt2").encode()).to_str() == hf_json("gpt2")
    assert repr(loaded.encode("hi")).startswith("Encoding(num_tokens=1")


def test_refuses_what_it_cannot_do():
    spec = json.loads(hf_json("gpt2"))
    spec["padding"] = {"strategy": "BatchLongest", "pad_id": 0, "pad_token": "!"}
    with pytest.raises(UnsupportedTokenizerError, match="padding"):
        Tokenizer.from_str(json.dumps(spec))
    spec = json.loads(hf_json("gpt2"))
    spec["post_processor"] = {"type": "Mystery"}
    with pytest.raises(UnsupportedTokenizerError, match="Mystery"):
        Tokenizer.from_str(json.dumps(spec))
    spec["post_processor"] = {"type": "Sequence", "processors": [
        json.loads(hf_json("gpt2+llama3"))["post_processor"]["processors"][1], {"type": "ByteLevel"}]}
    with pytest.raises(UnsupportedTokenizerError, match="after one that adds tokens"):
        Tokenizer.from_str(json.dumps(spec))
    with pytest.raises(EncodeInputError):
        ours("gpt2").encode(["a", "b"])


def test_from_pretrained(hub_env):
    tok = Tokenizer.from_pretrained("Qwen/Qwen3-8B")
    assert_same(tok.encode("Hello world 日本"), theirs("qwen3").encode("Hello world 日本"))
    with pytest.raises(UnsupportedTokenizerError, match="no tokenizer.json"):
        Tokenizer.from_pretrained("openai-community/gpt2")
    with pytest.raises(DownloadError):
        Tokenizer.from_pretrained("acme/gated")
    assert Tokenizer.from_pretrained("acme/gated", token=HF_TOKEN).encode("hello").ids


def _encode_in_worker(job):
    tok, text = job
    return tok.encode(text).ids, tok.decode(tok.encode(text).ids)


def test_pickles_deep_copies_and_goes_to_worker_processes():
    """As HF's Tokenizer: pickle, copy.deepcopy, and a multiprocessing pool that receives the
    tokenizer as an argument (datasets.map(num_proc=...) and transformers' tokenizer_object=)."""
    import copy
    import multiprocessing
    import pickle

    tok = ours("gpt2+llama3")
    tok.decode([0, 1])  # the tables built on first use are made again after unpickling
    hf = theirs("gpt2+llama3")
    text = "Hello  world, <|endoftext|> é"
    for clone in (pickle.loads(pickle.dumps(tok)), copy.deepcopy(tok), copy.copy(tok)):
        assert clone.encode(text, "pair").ids == hf.encode(text, "pair").ids
        assert clone.to_str() == tok.to_str() and clone.decode([31373, 995]) == "hello world"
    tok.encode_special_tokens = True
    assert pickle.loads(pickle.dumps(tok)).encode_special_tokens is True
    tok.encode_special_tokens = False
    with multiprocessing.get_context("fork").Pool(2) as pool:
        got = pool.map(_encode_in_worker, [(tok, t) for t in ("hello world", text)])
    assert got == [(hf.encode(t).ids, hf.decode(hf.encode(t).ids)) for t in ("hello world", text)]
