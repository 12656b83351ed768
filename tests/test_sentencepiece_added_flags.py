"""Added-token flags in SentencePiece-style and Unigram tokenizer.json files, against HF
``tokenizers`` on both backends.

Hub files set them: XLM-R, ALBERT, DeBERTa-v3, multilingual-e5 and BGE-M3 give their
``<mask>``/``[MASK]`` ``lstrip: true`` (it takes the spaces before it), and older Llama
conversions list ``<unk>`` and ``<s>`` with ``normalized: true`` (found in the normalized text,
where the ``Prepend("▁")`` normalizer puts a ``▁`` before each stretch: ``"a <s>"`` gives
``▁a`` and ``▁<s>``). The files here are the repository's real ones (tests/data/unigram,
tests/data/spm) with the flags of some added tokens switched on; HF reads the same JSON.
``normalized: true`` under a ``Metaspace`` pre-tokenizer is found in the text of the normalizer
before it, and Metaspace runs on each part between such tokens, as in HF (after
``WhitespaceSplit`` then ``Metaspace`` too: test_unigram_normalized_added.py).
"""

from __future__ import annotations

import gzip
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer as HFTokenizer

from conftest import BACKENDS, DATA
from wordsplit import TokenizerOptions
from wordsplit.compat.tokenizers import Tokenizer as CompatTokenizer
from wordsplit.formats.hf import read_hf_tokenizer_json

# file → {added token: flags switched on}; each token is one of the file's own added tokens.
VARIANTS = {
    "unigram/spiece.albert.tokenizer.json.gz": {"[MASK]": dict(lstrip=True), "[SEP]": dict(rstrip=True)},
    "unigram/t5-small/tokenizer.json.gz": {"</s>": dict(rstrip=True), "<extra_id_0>": dict(lstrip=True, rstrip=True),
                                           "<extra_id_1>": dict(single_word=True)},
    # (normalized under Metaspace "first": found in the text, Metaspace run on each part left)
    "spm/mistral-v7-llama.tokenizer.json.gz": {"[INST]": dict(lstrip=True), "[/INST]": dict(rstrip=True),
                                               "[REF]": dict(single_word=True), "</s>": dict(normalized=True),
                                               "<s>": dict(normalized=True, lstrip=True)},
    "spm/mistral-v7-gemma.tokenizer.json.gz": {"[INST]": dict(lstrip=True, rstrip=True), "</s>": dict(lstrip=True)},
    # (Prepend + Replace, no pre-tokenizer: the layout of older Llama conversions)
    "spm/mistral-v7-llama-legacy.tokenizer.json.gz": {"<s>": dict(normalized=True), "</s>": dict(normalized=True),
                                                      "[INST]": dict(lstrip=True, rstrip=True)},
}

CASES = [
    "", "[MASK]", "Hello   [MASK] world", "a\t\n[MASK]\n b [MASK][MASK]", "x[SEP]  y [SEP]\u3000z",
    "Translate: hi </s>   <extra_id_0>  ok <extra_id_1> a<extra_id_1>b <extra_id_1>, </s>",
    "hi  [INST]  yo  [/INST]  z </s>  q", "a[REF]b [REF] x [REF]! ([REF])", "\u3000[INST]\u2003x",
    "hello <s> world", "<s>", "a<s>b", "<s><s>", "x </s> <s> y", "<unk>", " <unk>", "a <unk>b", "  <s>  ",
    "<s> </s><unk>", "é [INST] e\u0301 [INST]\n", "  leading and trailing  ",
]


def _variant(name: str) -> str:
    spec = json.loads(gzip.decompress((DATA / name).read_bytes()))
    for entry in spec["added_tokens"]:
        entry.update(VARIANTS[name].get(entry["content"], {}))
    return json.dumps(spec)


_BUILT: dict = {}


def built(name: str):
    """``(HF tokenizer, {backend: wordsplit Tokenizer}, compat Tokenizer)`` of a variant."""
    if name not in _BUILT:
        text = _variant(name)
        vocab = read_hf_tokenizer_json(text.encode(), source=name)
        _BUILT[name] = (HFTokenizer.from_str(text),
                        {backend: TokenizerOptions(backend=backend).build(vocab) for backend in BACKENDS},
                        CompatTokenizer.from_str(text))
    return _BUILT[name]


def assert_hfs(name: str, text: str) -> None:
    hf, toks, compat = built(name)
    expected = hf.encode(text, add_special_tokens=False).ids
    for backend, tok in toks.items():
        assert tok.encode(text, allowed_special="all") == expected, (backend, text)
        assert tok.encode_with_offsets(text, allowed_special="all").ids == expected, (backend, text)
    full, ours = hf.encode(text), compat.encode(text)
    assert (ours.ids, ours.offsets) == (full.ids, full.offsets), text


@pytest.mark.parametrize("name", VARIANTS)
def test_flagged_added_tokens_are_hfs(name):
    flags = read_hf_tokenizer_json(_variant(name).encode(), source=name).literal_flags
    assert sorted(flags) == sorted(VARIANTS[name])
    for text in CASES:
        assert_hfs(name, text)


@pytest.mark.parametrize("name", VARIANTS)
@settings(max_examples=60, deadline=None)
@given(parts=st.lists(st.one_of(st.sampled_from(["[MASK]", "[SEP]", "</s>", "<s>", "<unk>", "<extra_id_0>",
                                                 "<extra_id_1>", "[INST]", "[/INST]", "[REF]"]),
                                st.sampled_from([" ", "  ", "\t", "\n", "\u3000", "\xa0", "\u2003"]),
                                st.text(max_size=6)), max_size=10))
def test_hypothesis_texts_are_hfs(name, parts):
    assert_hfs(name, "".join(parts))


def _flagged(name: str, flags: dict) -> str:
    spec = json.loads(gzip.decompress((DATA / name).read_bytes()))
    for entry in spec["added_tokens"]:
        entry.update(flags.get(entry["content"], {}))
    return json.dumps(spec)


def test_normalized_tokens_in_a_unigram_file_are_hfs():
    """ALBERT's [MASK] and [SEP] with normalized: true under Metaspace: found in the normalized
    text, with Metaspace run on each part between them (HF's order), on both backends and in
    ``compat.tokenizers``' encodings (which cut a Unigram file's words themselves)."""
    text = _flagged("unigram/spiece.albert.tokenizer.json.gz",
                    {"[MASK]": dict(normalized=True, lstrip=True), "[SEP]": dict(normalized=True)})
    hf = HFTokenizer.from_str(text)
    vocab = read_hf_tokenizer_json(text.encode(), source="albert.json")
    for backend in BACKENDS:
        tok = TokenizerOptions(backend=backend).build(vocab)
        for case in [*CASES, "a[mask] b", "X [MASK]Y[SEP] [sep]", "[MASK]", " [MASK] [MASK]  z"]:
            expected = hf.encode(case, add_special_tokens=False)
            found = tok.encode_with_offsets(case, allowed_special="all")
            assert found.ids == expected.ids, (backend, case)
            assert found.char_offsets == [tuple(o) for o in expected.offsets], (backend, case)
    compat = CompatTokenizer.from_str(text)
    for case in [*CASES, "a[mask] b", "X [MASK]Y[SEP] [sep]", " [MASK] [MASK]  z"]:
        theirs, mine = hf.encode(case), compat.encode(case)
        assert (mine.ids, mine.tokens, mine.offsets, mine.word_ids) == \
            (theirs.ids, theirs.tokens, theirs.offsets, theirs.word_ids), case
