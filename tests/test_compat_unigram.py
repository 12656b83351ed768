"""The drop-ins on Unigram files: ``wordsplit.compat.tokenizers`` on every Unigram tokenizer.json
of tests/data/unigram/ (T5's ``</s>`` template and its WhitespaceSplit layout, XLM-R's
``<s> A </s></s> B </s>``, ALBERT's ``[CLS]``/``[SEP]`` and its added tokens, Marian's,
maxtext's and the Japanese model's converted files, the Llama-converted one with byte fallback,
onnxruntime-extensions' NMT file), and ``wordsplit.compat.transformers.accelerate`` on
transformers' T5, ALBERT and XLM-R tokenizers built from those files and converted from the
``.model`` files, against HF ``tokenizers`` 0.23 and transformers live and against the goldens.
Every field of every encoding is compared (its overflowing parts too), over truncation and
padding, pairs, pre-tokenized words, batches, random ids to decode and streams, on hypothesis'
texts from an alphabet rich in what the character maps, Metaspace and the Viterbi decide."""

from __future__ import annotations

import copy
import functools
import json
import pickle
import random
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pytest
import tokenizers
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tokenizers.decoders import DecodeStream as HFDecodeStream

from compat_cases import fields, result, set_alike
from test_compat_tokenizers import stream_step
from test_unigram import ADVERSARIAL, ALPHABET, JSONS, UNIGRAM, golden, json_golden_name, raw
from wordsplit.compat.tokenizers import Tokenizer
from wordsplit.compat.tokenizers.decoders import DecodeStream
from wordsplit.errors import EncodeInputError

pytestmark = pytest.mark.skipif(not UNIGRAM.is_dir(), reason="tests/data/unigram/ (the family data) is not here")

TEXTS = ["Hello world", "  Hello   world  ", "", " ", "a\tb\nc", "Ｈｅｌｌｏ ①", "😀 x 😀😀", "<s>hi</s> there <unk>",
         "é e\u0301", "ﬁne (test) – €5 \"q\"", "日本語のテキスト", "x▁y ▁▁z", "<0x41>", "[CLS] a [SEP]", "</s>",
         "a</s>b", " </s> ", "\u200b\u200bx", "hello\u3000world", "``quoted''", "(phrasefix) a(#0)b", "<extra_id_5> x",
         *ADVERSARIAL]
SOME = ["t5-small/tokenizer.json.gz", "spiece.albert.tokenizer.json.gz",
        "test_sentencepiece.xlmroberta.tokenizer.json.gz",
        "test_sentencepiece_with_bytefallback.llama.tokenizer.json.gz"]
EXAMPLES = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
texts = st.one_of(st.lists(ALPHABET, max_size=16).map("".join), st.text(max_size=24))


def file_text(name: str) -> str:
    return raw(UNIGRAM / name).decode("utf-8")


@functools.cache
def _built(name: str) -> tuple[tokenizers.Tokenizer, Tokenizer]:
    return tokenizers.Tokenizer.from_str(file_text(name)), Tokenizer.from_str(file_text(name))


def both(name: str, truncation=None, padding=None):
    """HF's tokenizer and the drop-in of a file, set alike (``None``: off)."""
    hf, ws = _built(name)
    set_alike((hf, ws), truncation, padding)
    return hf, ws


def assert_calls_same(hf, ws, call) -> None:
    assert result(lambda: call(ws)) == result(lambda: call(hf))


def encode_calls(text: str, pair: str):
    """The encode calls compared on a text and its pair."""
    words, pair_words = text.split(" "), pair.split()
    return [
        lambda t: t.encode(text),
        lambda t: t.encode(text, add_special_tokens=False),
        lambda t: t.encode(text, pair),
        lambda t: t.encode(words, is_pretokenized=True),
        lambda t: t.encode(words, pair_words, is_pretokenized=True, add_special_tokens=False),
        lambda t: t.encode_batch([text, (text, pair), pair]),
        lambda t: t.encode_batch_fast([text, (pair, text)]),
    ]


# -- the goldens ---------------------------------------------------------------------------------


def _as_golden(tok, encoding) -> dict:
    return {"ids": encoding.ids, "type_ids": encoding.type_ids, "attention_mask": encoding.attention_mask,
            "offsets": [list(span) for span in encoding.offsets],
            "decoded": tok.decode(encoding.ids, skip_special_tokens=False),
            "decoded_skip_special": tok.decode(encoding.ids)}


@pytest.mark.parametrize("name", JSONS)
def test_the_goldens_of_hfs_full_encodings(name):
    record = golden(json_golden_name(name))
    _, tok = both(name)
    for case in record["cases"]:
        assert tok.encode(case["text"], add_special_tokens=False).ids == case["ids"], case["text"]
        assert _as_golden(tok, tok.encode(case["text"])) == case["with_specials"], case["text"]
    for case in record["pair_cases"]:
        mine = _as_golden(tok, tok.encode(case["text"], case["pair"]))
        assert mine == {key: case[key] for key in mine}, case
    for case in record["decode_cases"]:
        assert tok.decode(case["ids"], skip_special_tokens=False) == case["decoded"], case["ids"]
        assert tok.decode(case["ids"]) == case["decoded_skip_special"], case["ids"]


# -- every field, live ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", JSONS)
def test_every_field_is_hfs(name):
    hf, ws = both(name)
    for i, text in enumerate(TEXTS):
        for call in encode_calls(text, TEXTS[(i * 7 + 3) % len(TEXTS)]):
            assert_calls_same(hf, ws, call)
    hf.encode_special_tokens = ws.encode_special_tokens = True
    for text in TEXTS:
        assert_calls_same(hf, ws, lambda t: t.encode(text, "x</s>y"))
    base = [t.encode(" a b", add_special_tokens=False) for t in (hf, ws)]
    pair = [t.encode("c <s>", add_special_tokens=False) for t in (hf, ws)]
    assert fields(ws.post_process(base[1], pair[1])) == fields(hf.post_process(base[0], pair[0]))


@pytest.mark.parametrize("name", JSONS)
@EXAMPLES
@given(text=texts, pair=texts)
def test_hypothesis_texts_every_field_is_hfs(name, text, pair):
    hf, ws = both(name)
    for call in encode_calls(text, pair):
        assert_calls_same(hf, ws, call)


TRUNCATIONS = [
    {"max_length": 5},
    {"max_length": 7, "stride": 2, "strategy": "only_first", "direction": "left"},
    {"max_length": 6, "stride": 1, "strategy": "only_second"},
    {"max_length": 3, "direction": "left"},
    {"max_length": 1},
    {"max_length": 0},
]
PADDINGS = [None, {"length": None, "pad_to_multiple_of": 4, "direction": "left"},
            {"length": 12, "pad_id": 0, "pad_token": "<pad>", "pad_type_id": 1}]


# The texts of the truncation matrix: the short ones, and two that overflow into many windows
# (a long pair's windows are paired every way, so the overflow's size squares: 40 tokens
# make as many cases of each kind as 300 would).
TRUNCATED = TEXTS[:22] + ["x" * 41, "xxx" * 13]


@pytest.mark.parametrize("name", SOME)
def test_truncation_and_padding_are_hfs(name):
    for truncation in TRUNCATIONS:
        for padding in PADDINGS:
            hf, ws = both(name, truncation, padding)
            for i, text in enumerate(TRUNCATED):
                pair = TRUNCATED[(i * 5 + 1) % len(TRUNCATED)]
                assert_calls_same(hf, ws, lambda t: t.encode(text, pair))
                assert_calls_same(hf, ws, lambda t: t.encode(text))
            # one item per batch: where several items fail, which error HF raises depends on its threads
            assert_calls_same(hf, ws, lambda t: t.encode_batch(TEXTS[:6]))
            assert hf.truncation == ws.truncation and hf.padding == ws.padding


# -- the Metaspace layouts -----------------------------------------------------------------------


def _variant(base: str, pre_tokenizer=None, decoder=None, normalizer="keep") -> str:
    spec = json.loads(file_text(base))
    if pre_tokenizer is not None:
        spec["pre_tokenizer"] = pre_tokenizer
    if decoder is not None:
        spec["decoder"] = decoder
    if normalizer != "keep":
        spec["normalizer"] = normalizer
    return json.dumps(spec, ensure_ascii=False)


def _metaspace(scheme: str, split: bool) -> dict:
    return {"type": "Metaspace", "replacement": "▁", "prepend_scheme": scheme, "split": split}


def _whitespace_split(scheme: str) -> dict:
    return {"type": "Sequence", "pretokenizers": [{"type": "WhitespaceSplit"}, _metaspace(scheme, True)]}


T5_FILE = "test_sentencepiece.t5.tokenizer.json.gz"
VARIANTS = {
    **{f"metaspace-{scheme}-{split}": (T5_FILE, _metaspace(scheme, split), _metaspace(scheme, split))
       for scheme in ("first", "always", "never") for split in (True, False)},
    **{f"whitespace-split-{scheme}": ("t5-small/tokenizer.json.gz", _whitespace_split(scheme), None)
       for scheme in ("first", "always")},
}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_metaspace_layouts_are_hfs(variant):
    """Every prepend scheme with and without split, and T5's WhitespaceSplit layout: the
    drop-in's encodings, and the ids of the wordsplit tokenizer it reads the file into (which an
    accelerated transformers tokenizer encodes with), prepend_scheme first included."""
    base, pre_tokenizer, decoder = VARIANTS[variant]
    text = _variant(base, pre_tokenizer, decoder)
    hf, ws = tokenizers.Tokenizer.from_str(text), Tokenizer.from_str(text)
    for i, sample in enumerate(TEXTS):
        for call in encode_calls(sample, TEXTS[-i - 1]):
            assert_calls_same(hf, ws, call)
        ids = hf.encode(sample).ids
        assert ws.decode(ids) == hf.decode(ids)
        own = ws._tok.encode(sample, allowed_special="all")
        assert own == hf.encode(sample, add_special_tokens=False).ids, sample


@pytest.mark.parametrize("normalizer", [None, {"type": "NFKC"}, {"type": "Lowercase"}])
def test_other_normalizers_are_hfs(normalizer):
    text = _variant(T5_FILE, normalizer=normalizer)
    hf, ws = tokenizers.Tokenizer.from_str(text), Tokenizer.from_str(text)
    for sample in TEXTS:
        assert_calls_same(hf, ws, lambda t: t.encode(sample, "Ａb c"))


def test_tokens_of_unknown_runs_and_byte_fallback_are_hfs():
    """An unknown run's token is its text; byte fallback's tokens are the <0xNN> pieces, each
    with the whole run's offsets; T5's ▁ before a word is aligned to the word, not the spaces."""
    _, t5 = both("t5-small/tokenizer.json.gz")
    encoding = t5.encode("Hello  world 😀")
    assert encoding.tokens == ["▁Hello", "▁world", "▁", "😀", "</s>"]
    assert encoding.offsets == [(0, 5), (7, 12), (13, 14), (13, 14), (0, 0)]
    assert encoding.word_ids == [0, 1, 2, 2, None]
    _, llama = both("test_sentencepiece_with_bytefallback.llama.tokenizer.json.gz")
    encoding = llama.encode("a 😀")
    assert encoding.tokens[-4:] == ["<0xF0>", "<0x9F>", "<0x98>", "<0x80>"]
    assert encoding.offsets[-4:] == [(2, 3)] * 4
    for name in ("t5-small/tokenizer.json.gz", "test_sentencepiece_with_bytefallback.llama.tokenizer.json.gz"):
        hf, ws = both(name)
        for text in ("Hello  world 😀", "a 😀", "😀😀 ｶﾞ\x00"):
            assert fields(ws.encode(text)) == fields(hf.encode(text))


# -- decoding and the vocabulary -------------------------------------------------------------------


def _ids(name: str):
    hf, _ = both(name)
    size = hf.get_vocab_size()
    specials = [i for token, i in hf.get_vocab().items() if token.startswith(("<", "["))][:40]
    return st.lists(st.one_of(st.integers(0, size + 5), st.sampled_from(specials or [0])), max_size=12)


@pytest.mark.parametrize("name", JSONS)
@EXAMPLES
@given(data=st.data())
def test_decode_is_hfs(name, data):
    hf, ws = both(name)
    ids = data.draw(_ids(name))
    text = data.draw(texts)
    for sequence in (ids, hf.encode(text).ids + ids):
        for skip in (True, False):
            assert ws.decode(sequence, skip_special_tokens=skip) == hf.decode(sequence, skip_special_tokens=skip)
            assert ws.decode_batch([sequence, ids[:2]], skip) == hf.decode_batch([sequence, ids[:2]], skip)


@pytest.mark.parametrize("name", JSONS)
@EXAMPLES
@given(data=st.data())
def test_decode_stream_is_hfs(name, data):
    hf, ws = both(name)
    prefill = data.draw(st.one_of(st.none(), _ids(name)))
    skip = data.draw(st.booleans())
    ids = hf.encode(data.draw(texts)).ids + data.draw(_ids(name))
    theirs, mine = HFDecodeStream(prefill, skip_special_tokens=skip), DecodeStream(prefill, skip_special_tokens=skip)
    for i in ids:
        assert stream_step(mine, ws, i) == stream_step(theirs, hf, i)


@pytest.mark.parametrize("name", JSONS)
def test_vocabulary_lookups_are_hfs(name):
    hf, ws = both(name)
    for with_added in (True, False):
        assert ws.get_vocab(with_added) == hf.get_vocab(with_added)
        assert ws.get_vocab_size(with_added) == hf.get_vocab_size(with_added)
    size = hf.get_vocab_size()
    assert [ws.id_to_token(i) for i in range(size + 3)] == [hf.id_to_token(i) for i in range(size + 3)]
    for token in [*list(hf.get_vocab())[:2000], "nope", "<0x41>", "▁", "<unk>"]:
        assert ws.token_to_id(token) == hf.token_to_id(token)
    for is_pair in (False, True):
        assert ws.num_special_tokens_to_add(is_pair) == hf.num_special_tokens_to_add(is_pair)


def test_what_hfs_binding_refuses_raises_as_it_does():
    hf, ws = both(T5_FILE)
    for call in (lambda t: t.id_to_token(-1), lambda t: t.id_to_token(1 << 32), lambda t: t.decode([5, -1]),
                 lambda t: t.decode([1 << 32]), lambda t: t.decode(["a"])):
        with pytest.raises((OverflowError, TypeError)) as theirs:
            call(hf)
        with pytest.raises(theirs.type):
            call(ws)
    for call in (lambda t: t.encode("a\ud800"), lambda t: t.encode("a", "\udfff"),
                 lambda t: t.encode(["a", "\ud83d"], is_pretokenized=True), lambda t: t.encode_batch(["x", "\ud800"])):
        with pytest.raises(TypeError):
            call(hf)
        with pytest.raises(EncodeInputError):
            call(ws)


def test_pickles_and_copies_encode_alike():
    hf, ws = both("spiece.albert.tokenizer.json.gz", {"max_length": 9, "stride": 1})
    try:
        for clone in (pickle.loads(pickle.dumps(ws)), copy.deepcopy(ws)):
            assert fields(clone.encode("Hello (world) – £5", "x y")) == fields(hf.encode("Hello (world) – £5", "x y"))
            assert len(hf.encode("Hello (world) – £5", "x y").overflowing) > 1
            assert json.loads(clone.to_str())["truncation"] == json.loads(hf.to_str())["truncation"]
    finally:
        both("spiece.albert.tokenizer.json.gz")


# -- transformers --------------------------------------------------------------------------------


@functools.cache
def _folder(kind: str) -> Path:
    """A folder of files transformers loads: a tokenizer.json (with its tokenizer class), or a
    SentencePiece model under the file name its class looks for."""
    folder = Path(tempfile.mkdtemp(prefix=f"wordsplit-unigram-{kind}-"))
    sources = {
        "t5-small": [("t5-small/tokenizer.json.gz", "tokenizer.json"), ("t5-small/tokenizer_config.json", None)],
        "t5-json": [(T5_FILE, "tokenizer.json")],
        "albert-json": [("spiece.albert.tokenizer.json.gz", "tokenizer.json")],
        "xlmr-json": [("test_sentencepiece.xlmroberta.tokenizer.json.gz", "tokenizer.json")],
        "t5-model": [("test_sentencepiece.model.gz", "spiece.model")],
        "albert-model": [("spiece.model.gz", "spiece.model")],
        "xlmr-model": [("test_sentencepiece.model.gz", "sentencepiece.bpe.model")],
        "maxtext-json": [("maxtext-tokenizer.spm.tokenizer.json.gz", "tokenizer.json")],
        "llama-json": [("test_sentencepiece_with_bytefallback.llama.tokenizer.json.gz", "tokenizer.json")],
    }[kind]
    for source, target in sources:
        if target is None:
            shutil.copy(UNIGRAM / source, folder / Path(source).name)
        else:
            (folder / target).write_bytes(raw(UNIGRAM / source))
    classes = {"t5-json": "T5Tokenizer", "albert-json": "AlbertTokenizer", "xlmr-json": "XLMRobertaTokenizer"}
    if kind in classes:
        (folder / "tokenizer_config.json").write_text(json.dumps({"tokenizer_class": classes[kind]}))
    return folder


def _build(name: str):
    from transformers import (AlbertTokenizerFast, AutoTokenizer, PreTrainedTokenizerFast, T5TokenizerFast,
                              XLMRobertaTokenizerFast)

    kind, _, how = name.partition(":")
    folder = _folder(kind)
    if how == "auto":
        return AutoTokenizer.from_pretrained(str(folder))
    if how == "file":  # the class given the file (tokenizer_file=), its own special tokens
        cls = {"t5-json": T5TokenizerFast, "albert-json": AlbertTokenizerFast,
               "xlmr-json": XLMRobertaTokenizerFast}[kind]
        return cls(tokenizer_file=str(folder / "tokenizer.json"))
    if how == "model":  # transformers' conversion of the .model file
        cls = {"t5-model": T5TokenizerFast, "albert-model": AlbertTokenizerFast,
               "xlmr-model": XLMRobertaTokenizerFast}[kind]
        return cls.from_pretrained(str(folder))
    return PreTrainedTokenizerFast(tokenizer_file=str(folder / "tokenizer.json"), bos_token="<s>",
                                   eos_token="</s>", unk_token="<unk>", pad_token="</s>")


TRANSFORMERS = ["t5-small:auto", "t5-json:auto", "t5-json:file", "albert-json:auto", "albert-json:file",
                "xlmr-json:auto", "xlmr-json:file", "t5-model:model", "albert-model:model", "xlmr-model:model",
                "maxtext-json:plain", "llama-json:plain"]
TRANSFORMERS_SOME = ["t5-small:auto", "albert-model:model", "xlmr-json:file", "llama-json:plain"]


@functools.cache
def tf_pair(name: str):
    """``(transformers' tokenizer, accelerate(it))``."""
    from wordsplit.compat.transformers import accelerate

    tok = _build(name)
    return tok, accelerate(tok)


def tf_outcome(call):
    """A call's result, or the type of the exception it raised ("panic" for HF's panics)."""
    try:
        return call()
    except Exception as error:  # noqa: BLE001 (the type is compared)
        return type(error)
    except BaseException as error:  # noqa: BLE001
        if type(error).__name__ != "PanicException":
            raise
        return "panic"


def assert_same_tf_call(name, *args, **kwargs) -> None:
    from test_compat_transformers import assert_same_batch

    tok, fast = tf_pair(name)
    theirs = tf_outcome(lambda: tok(*args, **kwargs))
    mine = tf_outcome(lambda: fast(*args, **kwargs))
    if isinstance(theirs, (type, str)):
        assert mine == theirs, (args, kwargs)
    else:
        assert not isinstance(mine, (type, str)), (mine, args, kwargs)
        assert_same_batch(mine, theirs)


TF_PAIR_OPTIONS = [{}, {"padding": True, "return_token_type_ids": True}, {"return_offsets_mapping": True},
                   {"truncation": True, "max_length": 7}, {"truncation": "only_second", "max_length": 9},
                   {"truncation": "only_first", "max_length": 8, "return_overflowing_tokens": True},
                   {"truncation": "longest_first", "max_length": 9, "stride": 1, "return_overflowing_tokens": True,
                    "padding": "max_length", "return_offsets_mapping": True}]
TF_BATCH = ["Hello world, this is T5.", "  Ｈｅｌｌｏ  ｶﾞ 😀 ", "", "<s>x</s> <unk> [CLS] (a) – £5 ``b''",
            "日本語のテキスト", "x▁y\t\nz"]


@pytest.mark.parametrize("name", TRANSFORMERS)
def test_transformers_calls_are_identical(name):
    from test_compat_transformers import OPTIONS

    tok, fast = tf_pair(name)
    backend = fast.backend_tokenizer
    assert backend.accelerated and backend.fallback_reason is None
    for options in OPTIONS:
        assert_same_tf_call(name, TF_BATCH, **options)
        assert_same_tf_call(name, TF_BATCH[0], **options)
    for options in TF_PAIR_OPTIONS:
        assert_same_tf_call(name, TF_BATCH, text_pair=TF_BATCH[::-1], **options)
    for text in TF_BATCH:
        words = text.split(" ")
        assert_same_tf_call(name, words, is_split_into_words=True, return_offsets_mapping=True)
        assert_same_tf_call(name, [words, words[::-1]], is_split_into_words=True, truncation=True, max_length=4)
        assert fast.tokenize(text) == tok.tokenize(text)
        for options in ({}, {"add_special_tokens": False}, {"truncation": True, "max_length": 3}):
            assert fast.encode(text, **options) == tok.encode(text, **options)
    # what ran on HF's code: only the calls HF itself fails on, for HF's own error
    assert set(backend.fallbacks) <= {"truncation error"}


@pytest.mark.parametrize("name", TRANSFORMERS_SOME)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batch=st.lists(texts, min_size=1, max_size=3))
def test_transformers_hypothesis_texts(name, batch):
    from test_compat_transformers import OPTIONS

    for options in OPTIONS:
        assert_same_tf_call(name, batch, **options)
    for options in TF_PAIR_OPTIONS[:4]:
        assert_same_tf_call(name, batch, text_pair=batch[::-1], **options)


@pytest.mark.parametrize("name", TRANSFORMERS)
def test_transformers_decode_and_vocabulary_are_identical(name):
    tok, fast = tf_pair(name)
    rng = random.Random(name)
    size = len(tok)
    sequences = [tok(text)["input_ids"] for text in TF_BATCH]
    sequences += [[rng.randrange(size + 5) for _ in range(rng.randint(0, 12))] for _ in range(40)]
    for options in [{}, {"skip_special_tokens": True}, {"clean_up_tokenization_spaces": True},
                    {"skip_special_tokens": True, "clean_up_tokenization_spaces": False}]:
        for ids in sequences:
            assert fast.decode(ids, **options) == tok.decode(ids, **options)
        assert fast.batch_decode(sequences, **options) == tok.batch_decode(sequences, **options)
        rectangle = np.array([(ids + [0, 0])[:2] for ids in sequences], dtype=np.int64)
        assert fast.batch_decode(rectangle, **options) == tok.batch_decode(rectangle, **options)
    assert fast.get_vocab() == tok.get_vocab() and len(fast) == len(tok) and fast.vocab_size == tok.vocab_size
    assert fast.added_tokens_decoder == tok.added_tokens_decoder and fast.all_special_ids == tok.all_special_ids
    tokens = list(tok.get_vocab())[:300] + ["no-such-token"]
    assert fast.convert_tokens_to_ids(tokens) == tok.convert_tokens_to_ids(tokens)
    assert fast.convert_tokens_to_string(tokens[:40]) == tok.convert_tokens_to_string(tokens[:40])
    every_id = list(range(size + 3))
    assert fast.convert_ids_to_tokens(every_id) == tok.convert_ids_to_tokens(every_id)
    assert fast.convert_ids_to_tokens(every_id[:60], skip_special_tokens=True) == \
        tok.convert_ids_to_tokens(every_id[:60], skip_special_tokens=True)
    for is_pair in (False, True):
        assert fast.num_special_tokens_to_add(is_pair) == tok.num_special_tokens_to_add(is_pair)


@pytest.mark.parametrize("name", TRANSFORMERS_SOME)
@EXAMPLES
@given(data=st.data())
def test_transformers_decode_stream_is_hfs(name, data):
    from wordsplit.compat.transformers import DecodeStream as TransformersStream

    tok, fast = tf_pair(name)
    size = len(tok)
    extra = data.draw(st.lists(st.integers(0, size + 5), max_size=8))
    ids = tok(data.draw(texts))["input_ids"] + extra
    prefill = data.draw(st.one_of(st.none(), st.lists(st.integers(0, size - 1), max_size=3)))
    skip = data.draw(st.booleans())
    theirs = HFDecodeStream(prefill, skip_special_tokens=skip)
    mine = TransformersStream(prefill, skip_special_tokens=skip)
    for i in ids:
        assert stream_step(mine, fast, i) == stream_step(theirs, tok.backend_tokenizer, i)


def test_transformers_refuses_surrogates_as_hf():
    tok, fast = tf_pair("t5-small:auto")
    for batch in ("a\ud800", ["x", "a\ud83d"], ["a\ud83d\ude00"]):
        for options in ({}, {"return_offsets_mapping": True}, {"return_tensors": "np"}):
            assert tf_outcome(lambda: fast(batch, **options)) is tf_outcome(lambda: tok(batch, **options)) is TypeError


def test_t5_whitespace_split_with_prepend_first_is_transformers():
    """With prepend_scheme first, T5's layout: the loader's own tokenizer gives HF's ids, so
    __call__'s fast path runs it, and the results are transformers'."""
    from transformers import PreTrainedTokenizerFast

    from wordsplit.compat.transformers import accelerate

    text = _variant("t5-small/tokenizer.json.gz", _whitespace_split("first"))
    tok = PreTrainedTokenizerFast(tokenizer_object=tokenizers.Tokenizer.from_str(text), pad_token="<pad>",
                                  eos_token="</s>")
    fast = accelerate(tok)
    for options in ({}, {"padding": True, "return_tensors": "np"}, {"return_offsets_mapping": True}):
        theirs, mine = tok([" Hello world", "x y"], **options), fast([" Hello world", "x y"], **options)
        assert [list(row) for row in mine["input_ids"]] == [list(row) for row in theirs["input_ids"]]
    assert theirs["input_ids"][0][:2] == [566, 7126]  # "H", "ello": no ▁ before a word after white space
