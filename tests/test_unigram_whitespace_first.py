"""T5's ``WhitespaceSplit`` then ``Metaspace`` layout with ``prepend_scheme: "first"`` (HF puts
the ``▁`` before the first word only, when it starts the input at offset 0, and encodes every
word alone): ``load_vocab`` reads it (the Metaspace normalizer keeps the white space, a split
program drops it and cuts before every ``▁``) and both backends give HF ``tokenizers`` 0.23's
ids, decoded text and offsets (the native backend's from the core); on t5-small's tokenizer.json with the
scheme set to ``first``, with its own normalizer and with ones that drop or change the text's
start (``Strip``, ``Lowercase``); and ``wordsplit.compat.tokenizers`` reads the file into the
same pipeline."""

from __future__ import annotations

import gzip
import json
from functools import lru_cache
from pathlib import Path

import pytest
import tokenizers
from hypothesis import given, settings
from hypothesis import strategies as st

from wordsplit import TokenizerOptions, load_vocab
from wordsplit.core import extension
from wordsplit.spec import Metaspace, SplitProgram

DATA = Path(__file__).parent / "data" / "unigram"
BACKENDS = ("python", "native")
STRIP = {"type": "Strip", "strip_left": True, "strip_right": True}
# The file's normalizer (T5's Precompiled), and ones before it that drop or change the start.
NORMALIZERS = {
    "file": None,
    "strip": lambda own: {"type": "Sequence", "normalizers": [STRIP, own]},
    "lowercase": lambda own: {"type": "Sequence", "normalizers": [{"type": "Lowercase"}, own]},
}


def _spec(normalizer: str) -> dict:
    spec = json.loads(gzip.decompress((DATA / "t5-small" / "tokenizer.json.gz").read_bytes()))
    whitespace, metaspace = spec["pre_tokenizer"]["pretokenizers"]
    assert whitespace == {"type": "WhitespaceSplit"} and metaspace["type"] == "Metaspace"
    metaspace = {key: value for key, value in metaspace.items() if key != "add_prefix_space"}
    spec["pre_tokenizer"]["pretokenizers"][1] = {**metaspace, "prepend_scheme": "first", "split": True}
    if NORMALIZERS[normalizer] is not None:
        spec["normalizer"] = NORMALIZERS[normalizer](spec["normalizer"])
    return spec


@lru_cache(maxsize=None)
def _tokenizers(normalizer: str, tmp: Path):
    text = json.dumps(_spec(normalizer))
    path = tmp / normalizer / "tokenizer.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    vocab = load_vocab(path)
    backends = BACKENDS if extension() is not None else BACKENDS[:1]
    return tokenizers.Tokenizer.from_str(text), vocab, {b: TokenizerOptions(backend=b).build(vocab) for b in backends}


@pytest.fixture(scope="module")
def tmp(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("t5-first")


TEXTS = [
    "Hello world", "  Hello  world", "<pad>Hello world", "Hello</s> world", "▁Hello ▁world", "Hello▁world x",
    "", " ", "\u3000Hi", "a\xa0b", "x </s>", "</s>Hi there", " \u200bHi", "\u200bHi a", "Hi\n\nthere ",
    "\x1cHi a", "Translate English to German: That is good.", "  </s>  a",
    # NFKC spells these first characters as a space and a mark, or as several words: HF puts a
    # ▁ before each word of the input's first character
    "¨", "¨a b", "\ufdfa x", " ¨",
]


def _check(hf, toks, text):
    expected = hf.encode(text, add_special_tokens=False)
    for backend, tok in toks.items():
        assert tok.encode(text, allowed_special="all") == expected.ids, (backend, text)
        assert tok.decode(expected.ids) == hf.decode(expected.ids, skip_special_tokens=False), (backend, text)
    for backend, tok in toks.items():
        offsets = tok.encode_with_offsets(text, allowed_special="all").char_offsets
        assert [tuple(o) for o in offsets] == expected.offsets, (backend, text)


@pytest.mark.parametrize("normalizer", sorted(NORMALIZERS))
def test_load_vocab_reads_the_layout_and_gives_hfs_ids(normalizer, tmp):
    hf, vocab, toks = _tokenizers(normalizer, tmp)
    assert isinstance(vocab.pipeline.spanner, SplitProgram)
    stage = vocab.pipeline.normalizer
    assert isinstance(stage, Metaspace) and stage.whitespace_split and stage.prepend_scheme == "first"
    for text in TEXTS:
        _check(hf, toks, text)


ALPHABET = st.sampled_from(list("aAzZé中 \t\n\u3000\xa0\x85\u2028\u200b\x1c▁.,!0")) \
    | st.sampled_from(["</s>", "<pad>", "<unk>", "Hello", "  "]) | st.characters(exclude_categories=("Cs",))


@pytest.mark.parametrize("normalizer", sorted(NORMALIZERS))
@settings(max_examples=150, deadline=None)
@given(text=st.lists(ALPHABET, max_size=20).map("".join))
def test_hypothesis_texts_are_hfs(normalizer, tmp, text):
    hf, _, toks = _tokenizers(normalizer, tmp)
    _check(hf, toks, text)


@pytest.mark.parametrize("normalizer", sorted(NORMALIZERS))
def test_the_drop_in_reads_the_layout_as_the_loader_does(normalizer, tmp):
    """``wordsplit.compat.tokenizers`` reads the file into the loader's pipeline (prepend_scheme
    first, not always): the wordsplit tokenizer it wraps gives HF's ids itself, which an
    accelerated transformers tokenizer encodes with."""
    from wordsplit.compat.tokenizers import Tokenizer

    hf, vocab, _ = _tokenizers(normalizer, tmp)
    ws = Tokenizer.from_str(json.dumps(_spec(normalizer)))
    assert ws._tok.vocab.pipeline == vocab.pipeline
    for text in TEXTS:
        expected = hf.encode(text, add_special_tokens=False)
        assert ws._tok.encode(text, allowed_special="all") == expected.ids, text
        assert ws.encode(text, add_special_tokens=False).offsets == expected.offsets, text
