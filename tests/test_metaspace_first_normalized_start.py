"""``Metaspace`` with ``prepend_scheme: "first"`` after a normalizer that may drop the input's
first characters (``Strip`` on the left, a ``Replace`` by nothing or of a regex,
``StripAccents``, ``BertNormalizer``'s cleaning), with no
added token involved, against HF ``tokenizers`` 0.23 live: HF's second pass slices each
stretch out of the normalized text even when it finds nothing, so the slice's
``offsets_original()[0]`` is where its first character came from, and Metaspace prepends ``▁``
only when that is 0 (``"  ab"`` after ``Strip`` is ``ab``, no ``▁``). Both backends' ids and
char offsets (the native ids without the Python engine) and ``compat.tokenizers``' tokens,
offsets and word ids, for a Unigram file (test_sentencepiece.t5), a SentencePiece BPE with
byte fallback (mistral-v7-llama) and NLLB's BPE without it (``CharacterBpe``), on fixed texts
and hypothesis' texts; normalizers that cannot drop a first character (NFKC, T5's precompiled
map, whose dropped U+200B leaves the ``▁``, a ``Replace`` by text) keep it.

Also HF's string of a ``normalized`` ``lstrip`` added token in a BPE file through
``compat.tokenizers``: the white space it took as the normalizer spells it (NLLB's ``<mask>``
after U+3000 is ``" <mask>"``).
"""

from __future__ import annotations

import contextlib
import functools
import gzip
import json
from unittest import mock

import pytest
import tokenizers
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tokenizers import AddedToken

from conftest import BACKENDS, DATA
from wordsplit import TokenizerOptions
from wordsplit.compat.tokenizers import Tokenizer as CompatTokenizer
from wordsplit.core import extension
from wordsplit.engines.python import PythonEngine
from wordsplit.errors import UnsupportedTokenizerError
from wordsplit.formats.hf import read_hf_tokenizer_json

pytestmark = pytest.mark.skipif(extension() is None, reason="the native core is not built")

SPACE = "\u2581"
FILES = {"t5": DATA / "unigram" / "test_sentencepiece.t5.tokenizer.json.gz",
         "llama": DATA / "spm" / "mistral-v7-llama.tokenizer.json.gz",
         "nllb": DATA / "unigram" / "test_sentencepiece_bpe.nllb.tokenizer.json.gz"}
STRIP = {"type": "Strip", "strip_left": True, "strip_right": True}
NORMALIZERS = {
    # (these may drop the input's first character)
    "strip": STRIP,
    "strip-left-nfkc": {"type": "Sequence", "normalizers": [
        {"type": "Strip", "strip_left": True, "strip_right": False}, {"type": "NFKC"}]},
    "replace-empty": {"type": "Replace", "pattern": {"String": "x"}, "content": ""},
    "accents": {"type": "Sequence", "normalizers": [{"type": "NFD"}, {"type": "StripAccents"}]},
    "strip-map": "strip+map",  # (Strip, then the file's or T5's precompiled map)
    "bert-clean": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": False,
                   "strip_accents": False, "lowercase": False},
    "regex-lead": {"type": "Replace", "pattern": {"Regex": "^\\s+"}, "content": ""},
    # (BERT's spaces around a CJK ideograph: the one before takes the ideograph's place, so
    # a leading ideograph keeps the ▁, aligned to it)
    "bert-cjk": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                 "strip_accents": False, "lowercase": False},
    # (these cannot: the ▁ stays)
    "nfkc": {"type": "NFKC"},
    "map": "map",
    "replace-text": {"type": "Replace", "pattern": {"String": "x"}, "content": "yy"},
}

PYTHON_ONLY = {"bert-clean", "bert-cjk", "regex-lead"}


@functools.cache
def t5_map() -> dict:
    return json.loads(gzip.decompress(FILES["t5"].read_bytes()))["normalizer"]


def first_tokens(model: dict, count: int) -> dict:
    """A BPE model cut to its first ``count`` ids (the byte tokens among them), its characters
    (the last ids) and the merges among those: a file both libraries load in a fraction of the
    time of the 32k one, whose rules are the same."""
    vocab = {token: i for token, i in model["vocab"].items() if i < count or len(token) == 1}
    merges = [pair for pair in model["merges"] if all(t in vocab for t in (*pair, "".join(pair)))]
    return {**model, "vocab": vocab, "merges": merges}


@functools.cache
def file_text(base: str, normalizer: str, split: bool) -> str:
    """``base``'s tokenizer.json with ``normalizer`` and a Metaspace ``first`` (``split``); the
    BPE files get a ``normalized`` ``lstrip`` token ``<m>`` as HF's ``add_tokens`` adds it."""
    spec = json.loads(gzip.decompress(FILES[base].read_bytes()))
    if base == "llama":
        spec["model"] = first_tokens(spec["model"], 4000)
    value = NORMALIZERS[normalizer]
    if value == "map":
        value = t5_map()
    elif value == "strip+map":
        value = {"type": "Sequence", "normalizers": [STRIP, t5_map()]}
    spec["normalizer"] = value
    metaspace = {"type": "Metaspace", "replacement": SPACE, "prepend_scheme": "first", "split": split}
    spec["pre_tokenizer"] = metaspace
    if base != "llama":
        spec["decoder"] = metaspace
    hf = tokenizers.Tokenizer.from_str(json.dumps(spec))
    if base != "t5":
        hf.add_tokens([AddedToken("<m>", lstrip=True, normalized=True)])
    return hf.to_str()


# base → the Metaspace splits its layouts take
SPLITS = {"t5": (True, False), "llama": (True, False), "nllb": (True, False)}
# (a byte-fallback BPE file with a precompiled map is refused at load, as every such file is)
LAYOUTS = [(base, normalizer, split) for base in FILES for normalizer in NORMALIZERS for split in SPLITS[base]
           if not (base == "llama" and "map" in normalizer)]


@functools.cache
def built(base: str, normalizer: str, split: bool):
    """``(HF's tokenizer, {backend: wordsplit Tokenizer}, compat Tokenizer or None)``: None
    for a byte-fallback BPE with a splitting Metaspace, which compat.tokenizers refuses (its
    word ids)."""
    text = file_text(base, normalizer, split)
    vocab = read_hf_tokenizer_json(text.encode(), source=f"{base}-{normalizer}.json")
    if base == "llama" and split:
        with pytest.raises(UnsupportedTokenizerError, match="word ids"):
            CompatTokenizer.from_str(text)
        compat = None
    else:
        compat = CompatTokenizer.from_str(text)
    return (tokenizers.Tokenizer.from_str(text),
            {backend: TokenizerOptions(backend=backend).build(vocab) for backend in BACKENDS}, compat)


def check(layout: tuple, text: str) -> None:
    """Both backends' ids and char offsets, and the compat encoding's fields, are HF's."""
    hf, toks, compat = built(*layout)
    expected = hf.encode(text, add_special_tokens=False)
    offsets = [tuple(o) for o in expected.offsets]
    python = toks["python"].encode_with_offsets(text, allowed_special="all")
    assert (python.ids, python.char_offsets) == (expected.ids, offsets), (layout, text)
    assert toks["python"].encode(text, allowed_special="all") == expected.ids, (layout, text)
    # (the core runs no BertNormalizer nor regex Replace before Metaspace: the native backend
    # hands such a file's texts to the Python engine)
    with mock.patch.object(PythonEngine, "encode", side_effect=AssertionError("Python ran")) \
            if layout[1] not in PYTHON_ONLY else contextlib.nullcontext():
        assert toks["native"].encode(text, allowed_special="all") == expected.ids, (layout, text)
    native = toks["native"].encode_with_offsets(text, allowed_special="all")
    assert (native.ids, native.char_offsets) == (expected.ids, offsets), (layout, text)
    assert (native.byte_offsets, native.word_ids) == (python.byte_offsets, python.word_ids), (layout, text)
    if compat is None:
        return
    theirs, mine = hf.encode(text), compat.encode(text)
    assert (mine.ids, mine.tokens, mine.offsets, mine.word_ids) == \
        (theirs.ids, theirs.tokens, theirs.offsets, theirs.word_ids), (layout, text)


TEXTS = ["  ab", "ab", " ab", "\tab c", "xab", "x ab", "xx", "x", "\u0301ab", "\u0301", "\u200bab", "\u200b ab",
         "\u3000a b", "", " ", "  ", "a  b ", "é", "e\u0301x", " \u0301a", "x\u0301 a", "</s>  ab", "  a</s> b",
         " a<m> b", "x<m>", "<m>a", "  <m>", "a\u3000<m>", "b <m>", "😀 a", " 😀", "\x01ab", " \x01 ab", "\ufffd a",
         "一a", "a一", " 一 二", "中文", "\x01中"]


@pytest.mark.parametrize("layout", LAYOUTS, ids=["-".join(map(str, layout)) for layout in LAYOUTS])
def test_fixed_texts_are_hfs(layout):
    for text in TEXTS:
        check(layout, text)


def test_hfs_rule():
    """What HF 0.23 gives, which the checks above hold wordsplit to."""
    hf, toks, compat = built("llama", "strip", False)
    assert hf.encode("  ab", add_special_tokens=False).tokens == ["ab"]
    assert hf.encode("ab", add_special_tokens=False).tokens == [SPACE + "ab"]
    assert compat.encode("  ab", add_special_tokens=False).tokens == ["ab"]
    for backend in BACKENDS:
        assert toks[backend].encode("  ab") == toks[backend].encode("ab")[1:] or \
            toks[backend].encode("  ab") != toks[backend].encode("ab")
        assert toks[backend].encode_with_offsets("  ab").char_offsets == [(2, 4)]
    # (a normalizer that cannot drop a first character: the ▁ stays; T5's map drops U+200B
    # but aligns the next character to it)
    assert built("t5", "map", False)[0].encode("\u200bab", add_special_tokens=False).tokens == [SPACE + "a", "b"]
    check(("t5", "map", False), "\u200bab")
    assert built("llama", "nfkc", False)[0].encode("  ab", add_special_tokens=False).tokens == [SPACE, SPACE + "ab"]
    check(("llama", "nfkc", False), "  ab")


def test_a_normalized_lstrip_token_s_string_is_its_normalized_text():
    """compat.tokenizers on BPE files: NLLB's own ``<mask>`` (``normalized``, ``lstrip``)."""
    text = gzip.decompress(FILES["nllb"].read_bytes()).decode()
    hf, compat = tokenizers.Tokenizer.from_str(text), CompatTokenizer.from_str(text)
    for sample in ["a\u3000<mask> c", "a\t<mask>", "ab \u00a0<mask>x", "b  <mask>", "\u200b <mask>", "<mask>",
                   "b\u2581<mask>", "\u2581<mask>", "a \u2581 <mask>"]:
        theirs, mine = hf.encode(sample), compat.encode(sample)
        assert (mine.ids, mine.tokens, mine.offsets, mine.word_ids) == \
            (theirs.ids, theirs.tokens, theirs.offsets, theirs.word_ids), sample
    assert compat.encode("a\u3000<mask>", add_special_tokens=False).tokens == ["\u2581a", " <mask>"]
    # (the map makes ▁ a space too: HF's string is " <mask>", not the text's "▁<mask>")
    assert compat.encode("b\u2581<mask>", add_special_tokens=False).tokens == ["\u2581b", " <mask>"]
    assert compat.encode("a\u3000<mask>", add_special_tokens=False, is_pretokenized=False).offsets == [(0, 1), (1, 8)]


PIECES = ["  ", " ", "\t", "x", "a", "b", "\u0301", "\u200b", "\u3000", "é", "</s>", "<m>", SPACE, "😀", "ab", "\x01",
          "一", "中文"]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(layout=st.sampled_from(LAYOUTS), text=st.lists(st.sampled_from(PIECES), max_size=8).map("".join))
def test_hypothesis_texts(layout, text):
    check(layout, text)
