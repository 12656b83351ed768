"""``WhitespaceSplit`` then ``Metaspace``, every ``prepend_scheme`` with ``split`` true and
false: HF cuts the text into words at runs of white space, Metaspace runs on each word (the
``▁`` put before it as the scheme says, and with ``split`` the word cut before every ``▁``;
without it a word's own ``▁`` cuts nothing), and the model encodes each piece alone.
``load_vocab`` reads every layout (``always`` with ``split`` as the joined words and the
SentencePiece split; the others with the white space kept by the Metaspace normalizer and a
split program of ``WhitespaceSplit``, then the cut before every ``▁`` with ``split``), and both
backends give HF ``tokenizers`` 0.23's ids, decoded text and offsets, the native one from the
core; on t5-small's tokenizer.json (Unigram) and on the NLLB-style SentencePiece BPE file
(read as a ``CharacterBpe`` model, whose ``<mask>`` is a ``normalized`` added token), each with
the layout set. ``wordsplit.compat.tokenizers`` gives HF's encodings of them too.
"""

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
from wordsplit.spec import Metaspace, SentencePieceSplit, SplitProgram

DATA = Path(__file__).parent / "data" / "unigram"
FILES = {"t5": DATA / "t5-small" / "tokenizer.json.gz", "nllb": DATA / "test_sentencepiece_bpe.nllb.tokenizer.json.gz"}
LAYOUTS = [(scheme, split) for scheme in ("always", "first", "never") for split in (True, False)]
CASES = [(name, scheme, split) for name in sorted(FILES) for scheme, split in LAYOUTS]

pytestmark = pytest.mark.skipif(extension() is None, reason="the native core is not built")


def _spec(name: str, scheme: str, split: bool) -> dict:
    """The file with its pre-tokenizer ``WhitespaceSplit`` then ``Metaspace(scheme, split)``
    and a Metaspace decoder of the same scheme (as transformers' converters write them)."""
    spec = json.loads(gzip.decompress(FILES[name].read_bytes()))
    metaspace = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": scheme, "split": split}
    spec["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [{"type": "WhitespaceSplit"}, metaspace]}
    spec["decoder"] = dict(metaspace)
    return spec


@lru_cache(maxsize=None)
def _tokenizers(name: str, scheme: str, split: bool, tmp: Path):
    text = json.dumps(_spec(name, scheme, split))
    path = tmp / f"{name}-{scheme}-{split}" / "tokenizer.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    vocab = load_vocab(path)
    toks = {backend: TokenizerOptions(backend=backend).build(vocab) for backend in ("python", "native")}
    return tokenizers.Tokenizer.from_str(text), vocab, toks


@pytest.fixture(scope="module")
def tmp(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("whitespace-layouts")


TEXTS = [
    "Hello world", "  Hello  world ", "", " ", "\t", "▁", "▁▁ ▁", "a▁b  c ▁d▁ \u3000e", "▁Hello ▁world▁",
    "Hello▁world x", "\u3000Hi\u2003there\xa0now", "a\x85b\u2028c\x1cd", "Hi\n\nthere ", " \u200bHi", "\u200bHi a",
    "</s>Hi there", "x </s> y", "<pad>a</s>", "  </s>  a", "<mask> a<mask>b ▁<mask>▁", "a <unk> b",
    "Translate English to German: That is good.", "¨", "¨a b", "\ufdfa x", "中文 ▁字", "😀 😀▁😀",
]


def _check(hf, toks, text):
    expected = hf.encode(text, add_special_tokens=False)
    decoded = hf.decode(expected.ids, skip_special_tokens=False)
    for backend, tok in toks.items():
        assert tok.encode(text, allowed_special="all") == expected.ids, (backend, text)
        assert tok.decode(expected.ids) == decoded, (backend, text)
        offsets = tok.encode_with_offsets(text, allowed_special="all").char_offsets
        assert [tuple(o) for o in offsets] == expected.offsets, (backend, text)


@pytest.mark.parametrize("name, scheme, split", CASES)
def test_load_vocab_reads_the_layout_and_gives_hfs_encodings(name, scheme, split, tmp):
    hf, vocab, toks = _tokenizers(name, scheme, split, tmp)
    stage, spanner = vocab.pipeline.normalizer, vocab.pipeline.spanner
    assert isinstance(stage, Metaspace) and stage.whitespace_split and stage.prepend_scheme == scheme
    if scheme == "always" and split:  # (the joined words, cut before every ▁)
        assert not stage.keeps_white_space and spanner == SentencePieceSplit(metaspace_split=True)
    else:
        assert stage.keeps_white_space and isinstance(spanner, SplitProgram)
        assert [step.behavior for step in spanner.steps] == ["Removed"] + ["MergedWithNext"] * split
    for text in TEXTS:
        _check(hf, toks, text)


@pytest.mark.parametrize("name, scheme, split", CASES)
def test_the_native_engine_runs_the_layout_itself(name, scheme, split, tmp):
    """The native backend's engine runs every stage in the core, and a Unigram model's offsets
    there too (no Python engine behind it); a ``CharacterBpe`` model's offsets are the Python
    engine's on every layout (its tokens need not tile their piece: ``offsets_in_python``)."""
    _, _, toks = _tokenizers(name, scheme, split, tmp)
    engine = toks["native"].native_engine()
    assert engine.native and engine.python_offsets == (name == "nllb")
    for text in TEXTS:
        toks["native"].encode_with_offsets(text, allowed_special="all")
    assert engine._offsets_engine is None or name == "nllb"


ALPHABET = st.sampled_from(list("aAzZé中 \t\n\u3000\xa0\x85\u2028\u200b\x1c▁.,!0")) \
    | st.sampled_from(["</s>", "<pad>", "<mask>", "Hello", "  ", "▁▁", "¨"]) | st.characters(exclude_categories=("Cs",))


@pytest.mark.parametrize("name, scheme, split", CASES)
@settings(max_examples=60, deadline=None)
@given(text=st.lists(ALPHABET, max_size=16).map("".join))
def test_hypothesis_texts_are_hfs(name, scheme, split, tmp, text):
    hf, _, toks = _tokenizers(name, scheme, split, tmp)
    _check(hf, toks, text)


@pytest.mark.parametrize("scheme, split", LAYOUTS)
def test_the_drop_in_gives_hfs_encodings(scheme, split, tmp):
    """``wordsplit.compat.tokenizers`` reads t5-small with the layout into the loader's
    pipeline and gives HF's ids, tokens, offsets and word ids."""
    from wordsplit.compat.tokenizers import Tokenizer

    hf, vocab, _ = _tokenizers("t5", scheme, split, tmp)
    ws = Tokenizer.from_str(json.dumps(_spec("t5", scheme, split)))
    assert ws._tok.vocab.pipeline == vocab.pipeline
    for text in TEXTS:
        expected, got = hf.encode(text), ws.encode(text)
        assert (got.ids, got.tokens, got.offsets, got.word_ids) == \
            (expected.ids, expected.tokens, expected.offsets, expected.word_ids), text


def test_an_inert_metaspace_after_a_normalizer_that_makes_spaces_the_replacement_keeps_its_words(tmp):
    """A normalizer that ends by making every space ``▁`` (Gemma's ``Replace``), then
    ``WhitespaceSplit`` and a Metaspace that neither prepends nor splits: the Metaspace changes
    nothing, yet HF still cuts at the other white space (tabs, newlines, U+3000) before it; the
    loader keeps the layout (``never`` with ``whitespace_split``) and both backends give HF's
    encodings."""
    spec = _spec("t5", "never", False)
    replace = {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}
    spec["normalizer"] = {"type": "Sequence", "normalizers": [spec["normalizer"], replace]}
    text = json.dumps(spec)
    path = tmp / "inert" / "tokenizer.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    vocab = load_vocab(path)
    stage = vocab.pipeline.normalizer
    assert isinstance(stage, Metaspace) and stage.whitespace_split and stage.prepend_scheme == "never"
    hf = tokenizers.Tokenizer.from_str(text)
    toks = {backend: TokenizerOptions(backend=backend).build(vocab) for backend in ("python", "native")}
    for text in [*TEXTS, "Hello world\tnow", "x\n\ny \u2581z"]:
        _check(hf, toks, text)
