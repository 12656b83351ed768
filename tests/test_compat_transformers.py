"""``wordsplit.compat.transformers.accelerate`` against transformers itself: every call made on
the accelerated copy and on the original tokenizer must give the same result (values, dtypes,
key order, the ``Encoding`` objects behind ``BatchEncoding``), or raise the same exception type.

The tokenizers: Qwen3's (its tokenizer.json and tokenizer_config.json, through
``AutoTokenizer``), GPT-2's configuration, a Llama-3-style file (ByteLevel, then a BOS template),
a BOS/EOS template, RoBERTa's post-processor, OLMo's file, a small WordLevel file, the
SentencePiece-style files (Llama's Metaspace, the legacy Prepend+Replace and Gemma's layouts,
with Llama's BOS template), and files wordsplit does not run: a WordLevel one with a Metaspace
pre-tokenizer and a SentencePiece-style one whose decoder strips two spaces (everything falls
back). Each is built once for the module. The BERT-family files are tests/test_compat_bert.py's.
"""

from __future__ import annotations

import copy
import functools
import gzip
import pickle
import re
import shutil

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer as HFTokenizer
from tokenizers.decoders import DecodeStream as HFDecodeStream
from tokenizers import decoders as hf_decoders
from tokenizers import models, pre_tokenizers, processors
from transformers import AutoTokenizer, PreTrainedTokenizerFast, TokenizersBackend

from conftest import DATA
from test_compat_tokenizers import PIECES, hf_json, stream_step
from wordsplit.compat.transformers import (Backend, DecodeStream, accelerate, disable, enable, is_accelerated,
                                           original)
from wordsplit.errors import UnsupportedTokenizerError

texts = st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=6)), max_size=8).map("".join)
batches = st.lists(texts, min_size=1, max_size=4)
EXAMPLES = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])

GPT2_EOT = "<|endoftext|>"


def _gpt2_with(post_processor) -> str:
    tok = HFTokenizer.from_str(hf_json("gpt2"))
    tok.post_processor = post_processor
    return tok.to_str()


def _wordlevel(pre_tokenizer=None) -> str:
    """A small WordLevel file (Whitespace pre-tokenizer, WordPiece decoder); with a Metaspace
    pre-tokenizer, a file wordsplit does not load."""
    words = ["[UNK]", "[PAD]", "hello", "world", "日本語", "x", "▁hello", "▁world", "▁x"]
    tok = HFTokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizer or pre_tokenizers.Whitespace()
    tok.decoder = hf_decoders.WordPiece()
    return tok.to_str()


@functools.lru_cache(maxsize=None)
def pair(name: str):
    """``(original transformers tokenizer, accelerate(original))`` of each tokenizer under test."""
    if name == "qwen3":
        directory = _qwen_dir()
        tok = AutoTokenizer.from_pretrained(str(directory))
    elif name in FILES:
        file, options = FILES[name]
        tok = PreTrainedTokenizerFast(tokenizer_object=file(), **options)
    else:
        files = {
            "gpt2": lambda: hf_json("gpt2"),
            "llama3": lambda: hf_json("gpt2+llama3"),
            "bos-eos": lambda: _gpt2_with(processors.TemplateProcessing(
                single=f"{GPT2_EOT} $A {GPT2_EOT}", pair=f"{GPT2_EOT} $A {GPT2_EOT} $B:1 {GPT2_EOT}:1",
                special_tokens=[(GPT2_EOT, 50256)])),
            "roberta": lambda: hf_json("gpt2+roberta"),
            "wordlevel": _wordlevel,
            "unloadable": lambda: _wordlevel(pre_tokenizers.Metaspace()),
        }
        word_level = name in ("wordlevel", "unloadable")
        special = "[PAD]" if word_level else GPT2_EOT
        tok = PreTrainedTokenizerFast(tokenizer_object=HFTokenizer.from_str(files[name]()), pad_token=special,
                                      unk_token="[UNK]" if word_level else special)
    return tok, accelerate(tok)


def _gz(path) -> HFTokenizer:
    return HFTokenizer.from_str(gzip.decompress((DATA / path).read_bytes()).decode())


def _spm(layout: str) -> HFTokenizer:
    """A SentencePiece-style file with Llama's BOS template (the files have no post-processor)."""
    return HFTokenizer.from_str(hf_json(f"spm-{layout}+bos"))


def _spm_strip_two() -> HFTokenizer:
    """Llama's layout with a decoder wordsplit does not run: Strip takes up to two spaces."""
    tok = _spm("llama")
    tok.decoder = hf_decoders.Sequence([hf_decoders.Replace("▁", " "), hf_decoders.ByteFallback(), hf_decoders.Fuse(),
                                        hf_decoders.Strip(" ", 2, 0)])
    return tok


SPM_TOKENS = {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>", "pad_token": "</s>"}
# The files of real models, with the special tokens those models use.
FILES = {
    "olmo": (lambda: _gz("hf/olmo-dolma-v1_5-tokenizer.json.gz"),
             {"eos_token": GPT2_EOT, "pad_token": "<|padding|>"}),
    "spm-llama": (lambda: _spm("llama"), SPM_TOKENS),
    "spm-llama-legacy": (lambda: _spm("llama-legacy"), SPM_TOKENS),
    "spm-gemma": (lambda: _spm("gemma"), SPM_TOKENS),
    "spm-strip-two": (_spm_strip_two, SPM_TOKENS),
}


@functools.lru_cache(maxsize=1)
def _qwen_dir():
    import tempfile
    from pathlib import Path

    directory = Path(tempfile.mkdtemp(prefix="wordsplit-qwen3-"))
    (directory / "tokenizer.json").write_bytes(gzip.decompress((DATA / "hf" / "tokenizer.json.gz").read_bytes()))
    shutil.copy(DATA / "hf" / "tokenizer_config.json", directory / "tokenizer_config.json")
    return directory


# The SentencePiece-style files (Llama's Metaspace, the legacy Prepend+Replace, Gemma's Replace).
SPM = ["spm-llama", "spm-llama-legacy", "spm-gemma"]
ACCELERATED = ["qwen3", "gpt2", "llama3", "bos-eos", "roberta", "olmo", "wordlevel", *SPM]
ALL = [*ACCELERATED, "unloadable"]

# Options of __call__, each checked on single texts and batches.
OPTIONS = [
    {},
    {"padding": True},
    {"padding": "longest", "padding_side": "left", "return_special_tokens_mask": True},
    {"padding": "max_length", "max_length": 16, "pad_to_multiple_of": 8, "return_token_type_ids": True},
    {"truncation": True, "max_length": 5},
    {"truncation": True, "max_length": 5, "stride": 2, "return_overflowing_tokens": True, "padding": True},
    {"truncation": True, "max_length": 6, "padding": True, "return_tensors": "np", "return_special_tokens_mask": True,
     "return_token_type_ids": True, "return_length": True},
    {"padding": True, "return_tensors": "np", "padding_side": "left"},
    {"return_tensors": "np"},
    {"return_attention_mask": False, "return_length": True},
    {"return_offsets_mapping": True, "padding": True},
    {"add_special_tokens": False, "padding": True, "return_special_tokens_mask": True},
    {"split_special_tokens": True},
]

ENCODING_FIELDS = ("ids", "type_ids", "tokens", "offsets", "attention_mask", "special_tokens_mask", "word_ids",
                   "sequence_ids", "n_sequences")


def assert_same_encoding(mine, theirs) -> None:
    for name in ENCODING_FIELDS:
        assert getattr(mine, name) == getattr(theirs, name), name
    assert len(mine) == len(theirs)
    n = len(theirs)
    for i in range(n + 1):
        assert mine.token_to_sequence(i) == theirs.token_to_sequence(i), i
        if i < n:
            assert mine.token_to_chars(i) == theirs.token_to_chars(i), i
            assert mine.token_to_word(i) == theirs.token_to_word(i), i
    for sequence in range(theirs.n_sequences):
        for position in range(max([end for _, end in theirs.offsets], default=0) + 1):
            assert mine.char_to_token(position, sequence) == theirs.char_to_token(position, sequence)
            assert mine.char_to_word(position, sequence) == theirs.char_to_word(position, sequence)
        for word in range(max([w for w in theirs.word_ids if w is not None], default=-1) + 2):
            assert mine.word_to_tokens(word, sequence) == theirs.word_to_tokens(word, sequence)
            assert mine.word_to_chars(word, sequence) == theirs.word_to_chars(word, sequence)
    assert len(mine.overflowing) == len(theirs.overflowing)
    for a, b in zip(mine.overflowing, theirs.overflowing):
        assert_same_encoding(a, b)


def _plain(value):
    if isinstance(value, np.ndarray):
        return value.dtype.str, value.shape, [_plain(v) for v in value] if value.dtype == object else value.tolist()
    return value


def assert_same_batch(mine, theirs) -> None:
    assert list(mine.keys()) == list(theirs.keys())
    for key in theirs:
        assert _plain(mine[key]) == _plain(theirs[key]), key
    assert mine.n_sequences == theirs.n_sequences
    assert mine.is_fast == theirs.is_fast
    assert len(mine.encodings) == len(theirs.encodings)
    for a, b in zip(mine.encodings, theirs.encodings):
        assert_same_encoding(a, b)


def outcome(call):
    """A call's result, or the type of the exception it raised."""
    try:
        return call()
    except Exception as error:  # noqa: BLE001 (the type is compared)
        return type(error)


def assert_same_call(name, *args, **kwargs) -> None:
    tok, fast = pair(name)
    theirs = outcome(lambda: tok(*args, **kwargs))
    mine = outcome(lambda: fast(*args, **kwargs))
    if isinstance(theirs, type):
        assert mine is theirs, (args, kwargs)
    else:
        assert not isinstance(mine, type), (mine, args, kwargs)
        assert_same_batch(mine, theirs)


# -- encoding ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ALL)
@EXAMPLES
@given(batch=batches)
def test_call_matches_transformers(name, batch):
    for options in OPTIONS:
        assert_same_call(name, batch, **options)
        assert_same_call(name, batch[0], **options)


@pytest.mark.parametrize("name", ALL)
@EXAMPLES
@given(batch=batches)
def test_pairs_match_transformers(name, batch):
    others = batch[::-1]
    for options in [{}, {"padding": True, "return_token_type_ids": True}, {"return_offsets_mapping": True},
                    {"truncation": True, "max_length": 7}, {"truncation": "only_second", "max_length": 9},
                    {"truncation": "only_first", "max_length": 8, "return_overflowing_tokens": True}]:
        assert_same_call(name, batch, text_pair=others, **options)
        assert_same_call(name, batch[0], text_pair=others[0], **options)


@pytest.mark.parametrize("name", ACCELERATED)
@EXAMPLES
@given(text=texts)
def test_encode_and_words_match_transformers(name, text):
    tok, fast = pair(name)
    for options in [{}, {"add_special_tokens": False}, {"truncation": True, "max_length": 3}]:
        assert fast.encode(text, **options) == tok.encode(text, **options)
    assert fast.tokenize(text) == tok.tokenize(text)
    words = text.split(" ")
    assert_same_call(name, words, is_split_into_words=True, padding=True)
    assert_same_call(name, [words, words[::-1]], is_split_into_words=True, truncation=True, max_length=4)


@pytest.mark.parametrize("name", ACCELERATED)
def test_truncation_side_left_and_short_lengths(name):
    tok, fast = pair(name)
    batch = ["Hello world and more words here", "日本語のテキスト 😀👍🏽", "", "x"]
    for side in ("left", "right"):
        tok.truncation_side = fast.truncation_side = side
        try:
            for max_length in (1, 2, 3, 8):
                for options in [{}, {"stride": 0, "return_overflowing_tokens": True}, {"padding": True,
                                                                                        "return_tensors": "np"}]:
                    assert_same_call(name, batch, truncation=True, max_length=max_length, **options)
        finally:
            tok.truncation_side = fast.truncation_side = "right"


@pytest.mark.parametrize("name", ACCELERATED)
def test_batch_encoding_maps(name):
    tok, fast = pair(name)
    batch = ["Hello world, 日本語", "don't  stop"]
    theirs, mine = tok(batch, padding=True), fast(batch, padding=True)
    for i in range(len(batch)):
        assert mine.tokens(i) == theirs.tokens(i)
        assert mine.word_ids(i) == theirs.word_ids(i)
        assert mine.sequence_ids(i) == theirs.sequence_ids(i)
        for position in range(len(batch[i])):
            assert mine.char_to_token(i, position) == theirs.char_to_token(i, position)
        # (a SentencePiece-style text is one word: both raise for word 1)
        assert outcome(lambda: mine.word_to_chars(i, 1)) == outcome(lambda: theirs.word_to_chars(i, 1))


# -- what falls back ------------------------------------------------------------------------


def test_a_file_wordsplit_does_not_load_runs_on_hf():
    tok, fast = pair("unloadable")
    backend = fast.backend_tokenizer
    assert isinstance(backend, Backend) and not backend.accelerated
    assert "Metaspace pre-tokenizer" in backend.fallback_reason
    before = backend.fallbacks["tokenizer"]
    assert_same_call("unloadable", ["hello world", "x y"], padding=True)
    assert backend.fallbacks["tokenizer"] == before + 1
    assert fast.decode([2, 3]) == tok.decode([2, 3])
    assert backend.fallbacks["decode"] >= 1


@pytest.mark.parametrize("name", SPM)
def test_sentencepiece_style_files_run_on_wordsplit(name):
    tok, fast = pair(name)
    backend = fast.backend_tokenizer
    assert isinstance(backend, Backend) and backend.accelerated and backend.fallback_reason is None
    untouched = dict(backend.fallbacks)
    assert_same_call(name, ["Hello  world", " 日本語 x"], padding=True, return_offsets_mapping=True)
    assert_same_call(name, "[INST] Hi 😀 [/INST]", return_tensors="np")
    byte_run = [1, 23325, 29473, 2294, 1023, 916, 781]  # <s> ▁Hello ▁ ▁world <0xFC> <0x91> <0x0A>: not UTF-8
    for skip in (False, True):
        assert fast.decode(byte_run, skip_special_tokens=skip) == tok.decode(byte_run, skip_special_tokens=skip)
    assert fast.batch_decode([byte_run, byte_run[4:]]) == tok.batch_decode([byte_run, byte_run[4:]])
    stream, hf_stream = DecodeStream(skip_special_tokens=True), HFDecodeStream(skip_special_tokens=True)
    assert [stream.step(fast, i) for i in byte_run] == [hf_stream.step(tok.backend_tokenizer, i) for i in byte_run]
    assert dict(backend.fallbacks) == untouched  # nothing ran on HF


def test_a_decoder_wordsplit_does_not_run_falls_back():
    tok, fast = pair("spm-strip-two")
    backend = fast.backend_tokenizer
    assert not backend.accelerated and "decoder" in backend.fallback_reason and "Strip" in backend.fallback_reason
    before = dict(backend.fallbacks)
    ids = [1, 29473, 29473, 23325, 29473, 2294]  # <s> ▁ ▁ ▁Hello ▁ ▁world: HF strips two leading spaces
    assert fast.decode(ids, skip_special_tokens=True) == tok.decode(ids, skip_special_tokens=True) == " Hello  world"
    assert_same_call("spm-strip-two", ["  Hello  world", "x"], padding=True, return_offsets_mapping=True)
    assert backend.fallbacks["decode"] == before.get("decode", 0) + 1
    assert backend.fallbacks["tokenizer"] == before.get("tokenizer", 0) + 1


@pytest.mark.parametrize("name, call", [
    ("qwen3", (["a b c d e f"], {"text_pair": ["g h i j"], "truncation": True, "max_length": 5})),
    ("qwen3", (["a b c d e f"], {"text_pair": ["g h i j"], "truncation": "only_first", "max_length": 6, "stride": 1,
                                 "return_overflowing_tokens": True, "padding": True})),
    ("roberta", (["Hello world and more"], {"truncation": True, "max_length": 4})),
    ("roberta", (["Hello world and more"], {"text_pair": ["x y z"], "truncation": "only_second", "max_length": 10,
                                            "stride": 1, "return_overflowing_tokens": True})),
    ("bos-eos", (["Hello world and more"], {"truncation": True, "max_length": 1, "padding": "max_length"})),
])
def test_truncation_of_pairs_and_any_post_processor_runs_on_wordsplit(name, call):
    """Pairs, every strategy, stride and overflow, RoBERTa's and BERT's processors and a
    max_length shorter than the template (HF's unsigned arithmetic: nothing is cut) are
    wordsplit's, with transformers' results."""
    backend = pair(name)[1].backend_tokenizer
    untouched = dict(backend.fallbacks)
    batch, kwargs = call
    assert_same_call(name, batch, **kwargs)
    assert dict(backend.fallbacks) == untouched


def test_where_hf_fails_to_truncate_hf_raises_its_error():
    """A truncation HF refuses (the second text too short for only_second) runs on HF's code,
    which raises its own exception."""
    tok, fast = pair("bos-eos")
    backend = fast.backend_tokenizer
    before = backend.fallbacks["truncation error"]
    assert_same_call("bos-eos", ["a b c d e f g"], text_pair=["x"], truncation="only_second", max_length=6)
    assert backend.fallbacks["truncation error"] == before + 1


def test_inputs_hf_refuses_raise_as_in_hf():
    tok, fast = pair("qwen3")
    for bad in ([1, 2], [["a", 1]], None, 5):
        assert outcome(lambda bad=bad: fast(bad)) is outcome(lambda bad=bad: tok(bad))
    backend = fast.backend_tokenizer
    assert outcome(lambda: backend.encode_batch([("a", "b", "c")])) is \
        outcome(lambda: tok.backend_tokenizer.encode_batch([("a", "b", "c")]))
    assert outcome(lambda: fast.decode(["x"])) is outcome(lambda: tok.decode(["x"]))


# -- decoding and the vocabulary ------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def _byte_ids(name) -> list[int]:
    """The ids of a file's byte tokens (``<0xNN>``, SentencePiece-style files), often drawn so
    that runs of them, valid UTF-8 or not, are decoded."""
    return sorted(i for token, i in pair(name)[0].get_vocab().items() if re.fullmatch("<0x[0-9A-F]{2}>", token))


def _ids(name):
    size = len(pair(name)[0])
    choices = [st.integers(0, size + 100), st.sampled_from([size - 1, size - 2, 0])]
    if _byte_ids(name):
        choices.append(st.sampled_from(_byte_ids(name)))
    return st.lists(st.one_of(*choices), max_size=12)


@pytest.mark.parametrize("name", ALL)
@EXAMPLES
@given(data=st.data())
def test_decode_matches_transformers(name, data):
    tok, fast = pair(name)
    sequences = data.draw(st.lists(_ids(name), min_size=1, max_size=4))
    for options in [{}, {"skip_special_tokens": True}, {"clean_up_tokenization_spaces": True},
                    {"skip_special_tokens": True, "clean_up_tokenization_spaces": False}]:
        assert fast.decode(sequences[0], **options) == tok.decode(sequences[0], **options)
        assert fast.batch_decode(sequences, **options) == tok.batch_decode(sequences, **options)
        assert fast.decode(sequences, **options) == tok.decode(sequences, **options)
        rectangle = np.array([(s + [0])[:1] + [0] for s in sequences], dtype=np.int64)
        assert fast.batch_decode(rectangle, **options) == tok.batch_decode(rectangle, **options)
    assert fast.convert_ids_to_tokens(sequences[0]) == tok.convert_ids_to_tokens(sequences[0])
    assert fast.convert_ids_to_tokens(sequences[0], skip_special_tokens=True) == \
        tok.convert_ids_to_tokens(sequences[0], skip_special_tokens=True)


@pytest.mark.parametrize("name", ALL)
def test_vocabulary_matches_transformers(name):
    tok, fast = pair(name)
    assert fast.get_vocab() == tok.get_vocab()
    assert len(fast) == len(tok) and fast.vocab_size == tok.vocab_size
    assert fast.added_tokens_decoder == tok.added_tokens_decoder
    assert fast.all_special_ids == tok.all_special_ids
    tokens = list(tok.get_vocab())[:50] + ["no-such-token", GPT2_EOT]
    assert fast.convert_tokens_to_ids(tokens) == tok.convert_tokens_to_ids(tokens)
    assert fast.convert_tokens_to_string(tokens[:10]) == tok.convert_tokens_to_string(tokens[:10])
    assert fast.num_special_tokens_to_add(True) == tok.num_special_tokens_to_add(True)


# Mistral's [INST] chat template, for the SentencePiece-style files (which have none).
INST_TEMPLATE = ("{{ bos_token }}{% for m in messages %}{% if m['role'] == 'assistant' %}"
                 "{{ ' ' + m['content'] + eos_token }}{% else %}{{ '[INST] ' + m['content'] + ' [/INST]' }}"
                 "{% endif %}{% endfor %}")


@pytest.mark.parametrize("name", ["qwen3", *SPM])
def test_chat_template_matches_transformers(name):
    tok, fast = pair(name)
    if name in SPM:
        tok, fast = copy.deepcopy(tok), copy.deepcopy(fast)
        tok.chat_template = fast.chat_template = INST_TEMPLATE
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi 😀 <think>"},
                {"role": "assistant", "content": "Hello!"}, {"role": "user", "content": "日本語?"}]
    for options in [{"tokenize": False}, {"tokenize": True}, {"tokenize": True, "add_generation_prompt": True},
                    {"tokenize": True, "return_dict": True}, {"tokenize": True, "return_dict": True,
                                                              "return_tensors": "np"}]:
        theirs = tok.apply_chat_template(messages, **options)
        mine = fast.apply_chat_template(messages, **options)
        if hasattr(theirs, "keys"):
            assert_same_batch(mine, theirs)
        else:
            assert mine == theirs
    batch = [messages[:2], messages]
    assert fast.apply_chat_template(batch, tokenize=True, padding=True) == \
        tok.apply_chat_template(batch, tokenize=True, padding=True)


# -- streaming ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ALL)
@EXAMPLES
@given(data=st.data())
def test_decode_stream_matches_hf(name, data):
    tok, fast = pair(name)
    prefill = data.draw(st.one_of(st.none(), _ids(name)))
    ids = data.draw(_ids(name))
    skip = data.draw(st.booleans())
    text = data.draw(texts)
    ids = tok.encode(text) + ids if data.draw(st.booleans()) else ids
    theirs, mine = HFDecodeStream(prefill, skip_special_tokens=skip), DecodeStream(prefill, skip_special_tokens=skip)
    for i in ids:
        assert stream_step(mine, fast, i) == stream_step(theirs, tok.backend_tokenizer, i)


@pytest.mark.parametrize("name", SPM)
def test_decode_stream_steps_on_ids_the_vocabulary_lacks(name):
    """An id past the vocabulary adds no text but is still a step: after the window raised
    (a byte token left incomplete, then <unk>), HF's stream raises again on it, and so must
    ours; on a stream in a good state it gives None."""
    tok, fast = pair(name)
    byte_00, byte_80 = (tok.convert_tokens_to_ids(t) for t in ("<0x00>", "<0x80>"))
    unk, outside = tok.convert_tokens_to_ids("<unk>"), len(tok)
    for ids in ([byte_00, byte_80, unk, outside, outside + 1], [byte_00, outside], [outside, byte_00]):
        theirs, mine = HFDecodeStream(None, skip_special_tokens=False), DecodeStream(None, skip_special_tokens=False)
        steps = [stream_step(theirs, tok.backend_tokenizer, i) for i in ids]
        assert [stream_step(mine, fast, i) for i in ids] == steps
    assert steps == [None, "\x00"]


def test_decode_stream_past_the_vocabulary():
    _, fast = pair("qwen3")
    stream = DecodeStream()
    embedding_padding = 151_936 - 1  # Qwen3's embedding has more rows than the tokenizer has ids
    assert [stream.step(fast, i) for i in [9707, embedding_padding, 1879]] == ["Hello", None, " world"]


# -- copies, pickling and other instances ---------------------------------------------------


def test_copies_pickles_and_original():
    tok, fast = pair("llama3")
    batch = ["Hello world", "日本語 😀"]
    expected = tok(batch, padding=True, return_offsets_mapping=True)
    for clone in (pickle.loads(pickle.dumps(fast)), copy.deepcopy(fast), accelerate(fast)):
        assert is_accelerated(clone) and type(clone) is type(fast) and isinstance(clone, type(tok))
        assert_same_batch(clone(batch, padding=True, return_offsets_mapping=True), expected)
        assert clone.backend_tokenizer is not fast.backend_tokenizer
    plain = original(fast)
    assert type(plain) is type(tok) and not is_accelerated(plain)
    assert not isinstance(plain.backend_tokenizer, Backend)
    assert_same_batch(plain(batch, padding=True, return_offsets_mapping=True), expected)
    assert pickle.loads(pickle.dumps(fast(batch, padding=True))).input_ids == expected.input_ids
    with pytest.raises(UnsupportedTokenizerError):
        original(tok)
    with pytest.raises(UnsupportedTokenizerError):
        accelerate(tok.backend_tokenizer)


def test_the_original_and_other_instances_are_untouched():
    tok, fast = pair("qwen3")
    other = AutoTokenizer.from_pretrained(str(_qwen_dir()))
    fast(["Hello world"], padding="max_length", max_length=9, truncation=True)
    assert type(tok) is type(other) and type(tok).__name__ == type(fast).__name__ == "Qwen2Tokenizer"
    assert isinstance(tok.backend_tokenizer, HFTokenizer) and isinstance(other.backend_tokenizer, HFTokenizer)
    assert tok.backend_tokenizer.padding is None and tok.backend_tokenizer.truncation is None
    assert not is_accelerated(tok) and not is_accelerated(other)
    assert tok("Hello world").input_ids == other("Hello world").input_ids == [9707, 1879]
    # nothing patched process-wide: transformers' classes are as transformers defines them
    assert TokenizersBackend._encode_plus.__module__ == "transformers.tokenization_utils_tokenizers"
    assert TokenizersBackend.decode.__module__ == "transformers.tokenization_utils_base"


def test_added_tokens_and_changed_components_are_seen():
    tok, fast = pair("gpt2")
    theirs, mine = copy.deepcopy(tok), accelerate(tok)
    for t in (theirs, mine):
        t.add_tokens(["wordsplit-new", "<tag>"])
        t.add_special_tokens({"additional_special_tokens": ["<special>"]})
    text = "a wordsplit-new b<tag>c <special> d"
    assert mine(text).input_ids == theirs(text).input_ids
    assert mine.decode(mine(text).input_ids, skip_special_tokens=True) == \
        theirs.decode(theirs(text).input_ids, skip_special_tokens=True)
    assert mine.backend_tokenizer.accelerated and len(mine) == len(theirs) == len(tok) + 3
    template = processors.TemplateProcessing(single=f"{GPT2_EOT} $A", special_tokens=[(GPT2_EOT, 50256)])
    for t in (theirs, mine):
        t.backend_tokenizer.post_processor = template
    assert_same_batch(mine([text, "x"], padding=True), theirs([text, "x"], padding=True))
    assert mine(text).input_ids[0] == 50256
    mine.backend_tokenizer.pre_tokenizer.add_prefix_space = True  # changed in place
    theirs.backend_tokenizer.pre_tokenizer.add_prefix_space = True
    assert mine("hello").input_ids == theirs("hello").input_ids
    words = ["hello", "wordsplit-new", "日本語", " x"]
    assert_same_batch(mine([words, words[:2]], is_split_into_words=True, return_offsets_mapping=True, padding=True),
                      theirs([words, words[:2]], is_split_into_words=True, return_offsets_mapping=True,
                             padding=True))
    assert_same_batch(mine(["hello world", " x  y"], return_offsets_mapping=True),
                      theirs(["hello world", " x  y"], return_offsets_mapping=True))
    assert len(tok) == len(fast) == len(pair("gpt2")[0])


def test_accelerate_refuses_what_is_not_a_fast_tokenizer():
    with pytest.raises(UnsupportedTokenizerError, match="TokenizersBackend"):
        accelerate(object())


def test_the_process_wide_switch_is_opt_in_and_reversible():
    tok, _ = pair("qwen3")
    import tokenizers.decoders

    hf_stream = tokenizers.decoders.DecodeStream
    enable()
    try:
        loaded = AutoTokenizer.from_pretrained(str(_qwen_dir()))
        assert is_accelerated(loaded) and not is_accelerated(tok)
        assert loaded("Hello world<|im_end|>").input_ids == tok("Hello world<|im_end|>").input_ids
        # what a server's detokenizer does with the name it imported: a stream over the backend
        for backend in (loaded.backend_tokenizer, tok.backend_tokenizer):
            stream = tokenizers.decoders.DecodeStream(skip_special_tokens=True)
            assert [stream.step(backend, i) for i in [9707, 1879, 151645]] == ["Hello", " world", None]
    finally:
        disable()
    assert tokenizers.decoders.DecodeStream is hf_stream
    assert not is_accelerated(AutoTokenizer.from_pretrained(str(_qwen_dir())))
    assert "from_pretrained" not in TokenizersBackend.__dict__


def test_save_pretrained_writes_the_original_files(tmp_path):
    tok, fast = pair("qwen3")
    for t in (tok, fast):  # transformers leaves a call's padding and truncation set on the backend
        t("x", padding="max_length", max_length=4, truncation=True)
    tok.save_pretrained(tmp_path / "original")
    fast.save_pretrained(tmp_path / "accelerated")
    for name in ("tokenizer.json", "tokenizer_config.json"):
        assert (tmp_path / "accelerated" / name).read_bytes() == (tmp_path / "original" / name).read_bytes()
