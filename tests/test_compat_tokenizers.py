"""``wordsplit.compat.tokenizers`` against HF ``tokenizers`` itself: Qwen3's tokenizer.json, a
GPT-2 tokenizer.json built here with HF's API (GPT-2's real configuration: ByteLevel
pre-tokenizer without prefix space, ByteLevel decoder, ByteLevel post-processor trimming
offsets), and variants with other post-processors (a Llama-3-style BOS template after
ByteLevel, a BOS/EOS template, RoBERTa's, BERT's, none); and the SentencePiece-style files
(Mistral v7's vocabulary in transformers' Llama Metaspace, legacy Prepend+Replace and Gemma
layouts, whose decoders are Replace, ByteFallback, Fuse and Strip; also with a Metaspace
decoder). Every attribute of every encoding must be equal, on both backends."""

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
from wordsplit.compat.tokenizers.decoders import DecodeStream, DecodeStreamError
from wordsplit.errors import DownloadError, EncodeInputError, UnsupportedTokenizerError, VocabFormatError

PIECES = [
    "Hello", " world", "  ", "   \n\n ", "\t", " \u3000 ", "日本語", "😀", "👩\u200d👩\u200d👧", " 🦀x", "e\u0301",
    "a\u0323\u0301", "\u1e0b\u0323", "\u212b", "\u1100\u1161\u11a8", "123", "don't", " <|im_end|>", "<|endoftext|>",
    "<think>", "é", "ß", "  x  ", "\u00a0y", "<s>", " [INST]", "</s>",
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
    if name.startswith("spm-"):
        return _spm_json(name.removeprefix("spm-"))
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


def _spm_json(name: str) -> str:
    """A SentencePiece-style file (``llama``, ``llama-legacy``, ``gemma``: no post-processor),
    ``+bos`` with Llama's BOS template, ``+metaspace-SCHEME`` with HF's Metaspace decoder."""
    layout, _, variant = name.partition("+")
    text = gzip.decompress((DATA / "spm" / f"mistral-v7-{layout}.tokenizer.json.gz").read_bytes()).decode("utf-8")
    if not variant:
        return text
    tok = HFTokenizer.from_str(text)
    if variant == "bos":
        tok.post_processor = processors.TemplateProcessing(single="<s> $A", pair="<s> $A <s>:1 $B:1",
                                                           special_tokens=[("<s>", 1)])
    elif variant.startswith("metaspace-"):
        tok.decoder = hf_decoders.Metaspace(replacement="▁", prepend_scheme=variant.removeprefix("metaspace-"))
    else:
        raise AssertionError(name)
    return tok.to_str()


SPM = ["spm-llama", "spm-llama-legacy", "spm-gemma", "spm-llama+bos"]
FILES = ["qwen3", "gpt2", "gpt2+llama3", "qwen3+bos-eos", "gpt2+trim-then-template", "gpt2+roberta", "qwen3+bert",
         "gpt2+none", *SPM]


@functools.lru_cache(maxsize=None)
def ours(name: str, backend: str = "auto") -> Tokenizer:
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


@pytest.mark.parametrize("name", ["qwen3", "gpt2", "spm-llama+bos"])
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


@pytest.mark.parametrize("name", ["qwen3", "gpt2", "spm-llama", "spm-gemma"])
def test_vocabulary_lookups(name):
    mine, hf = ours(name), theirs(name)
    assert mine.get_vocab() == hf.get_vocab()
    assert mine.get_vocab(with_added_tokens=False) == hf.get_vocab(with_added_tokens=False)
    for added in (True, False):
        assert mine.get_vocab_size(added) == hf.get_vocab_size(with_added_tokens=added)
    for token in ["Ġworld", "<|endoftext|>", "<think>", "hello", "not a token", "Ġ", "▁Hello", "▁", "<0x0A>", "<0xE6>",
                  "<s>", "[INST]", "<unk>"]:
        assert mine.token_to_id(token) == hf.token_to_id(token)
    for i in [0, 1, 3, 255, 781, 1000, 1879, 23325, 32767, 50256, 151645, 151667, 10**7]:
        assert mine.id_to_token(i) == hf.id_to_token(i)


# -- SentencePiece-style decoders -----------------------------------------------------------

# The decoders: the files' own Sequence (with Strip, and Gemma's without), and HF's Metaspace.
SPM_DECODERS = ["spm-llama", "spm-gemma", "spm-llama+metaspace-first", "spm-llama+metaspace-always",
                "spm-llama+metaspace-never"]
# Text made of characters the vocabulary lacks is encoded as their bytes' <0xNN> tokens.
RARE = ["ꙮ", "\U0001f9a9", "\u0fd0", "𝔘", "\x00", "\t\n", "é"]


@functools.lru_cache(maxsize=None)
def _byte_ids(name: str) -> list[int]:
    return sorted(i for token, i in theirs(name).get_vocab().items() if len(token) == 6 and token.startswith("<0x"))


def spm_ids(name: str):
    """Ids of a SentencePiece-style file: any (past the vocabulary too), byte tokens, special
    tokens, and a slice of the encoding of a text (which can cut a character's byte tokens)."""
    n = theirs(name).get_vocab_size()
    anything = st.lists(st.one_of(st.integers(0, n + 3), st.sampled_from(_byte_ids(name)), st.integers(0, 8)),
                        max_size=12)
    text = st.lists(st.one_of(st.sampled_from(PIECES + RARE), st.text(max_size=4)), max_size=6).map("".join)
    sliced = st.tuples(text.map(lambda t: theirs(name).encode(t).ids), st.integers(0, 4), st.integers(0, 4)).map(
        lambda cut: cut[0][cut[1]:len(cut[0]) - cut[2]])
    return st.one_of(anything, sliced, st.tuples(sliced, anything).map(lambda pair: pair[0] + pair[1]))


@pytest.mark.parametrize("name", SPM_DECODERS)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), skip=st.booleans())
def test_sentencepiece_decoders_match_hf(name, data, skip):
    ids = data.draw(spm_ids(name))
    assert ours(name).decode(ids, skip_special_tokens=skip) == theirs(name).decode(ids, skip_special_tokens=skip)
    batch = [ids, ids[1:], data.draw(spm_ids(name))]
    assert ours(name).decode_batch(batch, skip) == theirs(name).decode_batch(batch, skip_special_tokens=skip)
    assert [ours(name).id_to_token(i) for i in ids] == [theirs(name).id_to_token(i) for i in ids]


def test_sentencepiece_byte_runs_decode_as_hf():
    """A run of byte tokens is its UTF-8 text, or one U+FFFD per token when not valid UTF-8
    (an ASCII byte token in the run too); Strip drops the one leading space of the text."""
    mine, hf = ours("spm-llama"), theirs("spm-llama")
    e6, x97, xa5, newline = (hf.token_to_id(f"<0x{b:02X}>") for b in (0xE6, 0x97, 0xA5, 0x0A))
    hello = hf.token_to_id("▁Hello")
    cases = {(e6, x97, xa5): "日", (e6, x97): "\ufffd\ufffd", (e6, newline): "\ufffd\ufffd",
             (hello, e6, x97, xa5, hello): "Hello日 Hello", (1, hello): "<s> Hello", (newline, hello): "\n Hello"}
    for ids, text in cases.items():
        assert mine.decode(list(ids), skip_special_tokens=False) == hf.decode(list(ids), skip_special_tokens=False) \
            == text


def stream_step(stream, tokenizer, id):  # noqa: A002
    """A stream's step, or "raised": HF's stream raises a bare Exception where the text of its
    window no longer starts with what it showed (byte tokens re-read in a shorter window), where
    wordsplit's raises DecodeStreamError."""
    try:
        return stream.step(tokenizer, id)
    except Exception as error:  # noqa: BLE001
        assert type(error) in (Exception, DecodeStreamError), error
        return "raised"


@pytest.mark.parametrize("name", SPM_DECODERS)
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), skip=st.booleans(), prefill=st.integers(0, 3))
def test_sentencepiece_decode_stream_matches_hf(name, data, skip, prefill):
    from tokenizers.decoders import DecodeStream as HFDecodeStream

    ids = data.draw(spm_ids(name))
    head, tail = ids[:prefill], ids[prefill:]
    mine = DecodeStream(ids=head or None, skip_special_tokens=skip)
    hf = HFDecodeStream(ids=head or None, skip_special_tokens=skip)
    for token in tail:
        assert stream_step(mine, ours(name), token) == stream_step(hf, theirs(name), token)
    step = [ids[:2], ids[2:]]  # a list of ids at once
    mine, hf = DecodeStream(skip_special_tokens=skip), HFDecodeStream(skip_special_tokens=skip)
    assert [stream_step(mine, ours(name), part) for part in step] == \
        [stream_step(hf, theirs(name), part) for part in step]


def test_sentencepiece_stream_fails_where_hf_fails():
    """HF's stream re-decodes the ids since the chunk before last: after a byte token shown alone
    and one that starts a character, a token that is not a byte turns both into U+FFFD, and
    the text no longer starts with what was shown. Both streams raise there."""
    from tokenizers.decoders import DecodeStream as HFDecodeStream

    ids = [theirs("spm-gemma").token_to_id(t) for t in ("<0x17>", "<0xEB>", "▁is")]
    mine, hf = DecodeStream(), HFDecodeStream()
    mine_steps = [stream_step(mine, ours("spm-gemma"), i) for i in ids]
    assert mine_steps == [stream_step(hf, theirs("spm-gemma"), i) for i in ids] == ["\x17", None, "raised"]
    stream = DecodeStream()
    assert [stream.step(ours("spm-gemma"), i) for i in ids[:2]] == ["\x17", None]
    with pytest.raises(DecodeStreamError, match="does not start with"):
        stream.step(ours("spm-gemma"), ids[2])


def _spm_spec(layout: str = "llama") -> dict:
    return json.loads(_spm_json(layout))


def _with_decoder(decoder) -> str:
    tok = HFTokenizer.from_str(_spm_json("llama"))
    tok.decoder = decoder
    return tok.to_str()


@pytest.mark.parametrize("decoder", [
    hf_decoders.Sequence([hf_decoders.Replace("▁", " "), hf_decoders.ByteFallback(), hf_decoders.Strip(" ", 1, 0)]),
    hf_decoders.Sequence([hf_decoders.ByteFallback(), hf_decoders.Fuse()]),
    hf_decoders.Sequence([hf_decoders.Replace("▁", "_"), hf_decoders.ByteFallback(), hf_decoders.Fuse()]),
    hf_decoders.Sequence([hf_decoders.Replace("▁", " "), hf_decoders.ByteFallback(), hf_decoders.Fuse(),
                          hf_decoders.Strip(" ", 2, 0)]),
    hf_decoders.Sequence([hf_decoders.Strip(" ", 1, 0), hf_decoders.Replace("▁", " "), hf_decoders.ByteFallback(),
                          hf_decoders.Fuse()]),
    hf_decoders.WordPiece(),
], ids=["no-fuse", "no-replace", "other-replace", "strip-2", "strip-first", "wordpiece"])
def test_sentencepiece_decoders_it_cannot_run_are_refused(decoder):
    """Each of these decodes differently from the chains wordsplit runs (HF's own output shows
    it), so the file is refused rather than decoded as another chain."""
    text = _with_decoder(decoder)
    ids = theirs("spm-llama").encode("  Hello  world ꙮ").ids
    assert HFTokenizer.from_str(text).decode(ids) != theirs("spm-llama").decode(ids)
    with pytest.raises(UnsupportedTokenizerError, match="decoder"):
        Tokenizer.from_str(text)


def test_sentencepiece_files_hf_would_read_otherwise_are_refused():
    """A token string ByteFallback reads as text is text here too, one it reads as a second token
    of a byte is refused, and so is an added token whose id the model also makes (its word id
    would depend on which made it)."""
    spec = _spm_spec()
    merged = {part for left, right in spec["model"]["merges"] for part in (left, right, left + right)}
    added = {token["content"] for token in spec["added_tokens"]}
    free = next(t for t in spec["model"]["vocab"] if t not in merged and t not in added and not t.startswith("<"))
    spec["model"]["vocab"]["<0x 1>"] = spec["model"]["vocab"].pop(free)  # text for HF
    i = spec["model"]["vocab"]["<0x 1>"]
    assert Tokenizer.from_str(json.dumps(spec)).decode([i]) == HFTokenizer.from_str(json.dumps(spec)).decode([i]) \
        == "<0x 1>"
    spec["model"]["vocab"]["<0x+1>"] = spec["model"]["vocab"].pop("<0x 1>")  # the byte 0x01 for HF, as <0x01>
    assert HFTokenizer.from_str(json.dumps(spec)).decode([i]) == "\x01"
    with pytest.raises(UnsupportedTokenizerError, match="are both the byte 0x01"):
        Tokenizer.from_str(json.dumps(spec))
    spec = _spm_spec()
    the = spec["model"]["vocab"]["▁the"]
    spec["added_tokens"].append({"id": the, "content": "▁the", "single_word": False, "lstrip": False,
                                 "rstrip": False, "normalized": False, "special": False})
    with pytest.raises(UnsupportedTokenizerError, match="also makes from text"):
        Tokenizer.from_str(json.dumps(spec))


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
    spec["padding"] = {"strategy": "BatchLongest", "pad_id": 0, "pad_token": "!"}  # HF: missing field `direction`
    with pytest.raises(Exception, match="direction"):
        HFTokenizer.from_str(json.dumps(spec))
    with pytest.raises(VocabFormatError, match="padding"):
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
