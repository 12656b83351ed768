"""Added tokens with ``normalized: true`` (what HF's ``tokenizer.add_tokens([...])`` writes, so
the common case in fine-tuned T5, mT5 and XLM-R files) in Unigram tokenizer.json files, against
HF ``tokenizers`` 0.23 live: the ids and char offsets of both backends (the native one without
calling the Python engine), and every field of ``wordsplit.compat.tokenizers``' encodings
(ids, tokens, offsets, word ids), on fixed texts and on hypothesis' texts built around the
tokens.

The files are t5-small's (tests/data/unigram/t5-small: ``WhitespaceSplit`` then ``Metaspace``,
T5's older layout, and its ``Precompiled`` character map) with tokens added by HF's own
``add_tokens`` (``<x>``, ``" hi"``, ``"▁yo"``, ``<m>`` with ``lstrip`` and ``rstrip``, ``ab``
with ``single_word``) and ``<extra_id_0>`` switched to ``normalized``; its layouts: T5's as
written (``prepend_scheme`` ``always``), ``first``, a lone ``Metaspace`` of each scheme, and
a ``Strip`` before the character map. NLLB's BPE file (its own ``normalized`` ``<mask>``) after
``WhitespaceSplit`` runs the same engines' path.

What HF does (``AddedVocabulary::extract_and_normalize``, then the pre-tokenizer), which these
tests pin: the tokens are found in each stretch's text as the normalizer makes it (T5's map
makes ``▁`` a space, so ``"▁yo"`` is looked for as ``" yo"``; ``lstrip`` takes a U+3000 the map
made a space); each part between them is a *slice* of that text, and ``WhitespaceSplit`` then
``Metaspace`` cut and prefix each part's words. ``Metaspace`` prepends when
``offsets_original()[0] == 0`` for ``first``: only a part or word whose first character comes
from the input's first, so after a token no word gets a ``▁`` (``"a<x>b c"`` is ``▁ a <x> b
c``), and none does when the normalizer dropped the input's first character (``Strip``:
``"  a<x>"`` is ``a <x>``, even with Metaspace alone, where the part is a slice too). A second
pass token's string is its normalized text (``" <m>"`` for ``"\\u3000<m>"``).
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
from wordsplit.formats.hf import read_hf_tokenizer_json
from wordsplit.spec import Metaspace
from wordsplit.vocab import LSTRIP, NORMALIZED, RSTRIP, SINGLE_WORD

pytestmark = pytest.mark.skipif(extension() is None, reason="the native core is not built")

T5 = DATA / "unigram" / "t5-small" / "tokenizer.json.gz"
NLLB = DATA / "unigram" / "test_sentencepiece_bpe.nllb.tokenizer.json.gz"
SPACE = "\u2581"
# (content, flags) of the tokens HF's add_tokens puts in (normalized: true, its default).
ADDED = [("<x>", {}), (" hi", {}), (SPACE + "yo", {}), ("<m>", dict(lstrip=True, rstrip=True)),
         ("ab", dict(single_word=True))]
STRIP = {"type": "Strip", "strip_left": True, "strip_right": True}


def _metaspace(scheme: str, split: bool = True) -> dict:
    return {"type": "Metaspace", "replacement": SPACE, "prepend_scheme": scheme, "split": split}


def _words(scheme: str) -> dict:
    return {"type": "Sequence", "pretokenizers": [{"type": "WhitespaceSplit"}, _metaspace(scheme)]}


# layout → (pre-tokenizer, whether a Strip runs before the character map); None: T5's own.
LAYOUTS = {
    "t5": (None, False),
    "t5-first": (_words("first"), False),
    "t5-first-strip": (_words("first"), True),
    "t5-always-strip": (None, True),
    "metaspace-always": (_metaspace("always"), False),
    "metaspace-first": (_metaspace("first"), False),
    "metaspace-first-strip": (_metaspace("first"), True),
    "metaspace-never": (_metaspace("never"), False),
    "metaspace-no-split": (_metaspace("always", split=False), False),
}
NLLB_LAYOUTS = {"nllb-words": _words("always"), "nllb-words-first": _words("first")}


@functools.cache
def file_text(layout: str) -> str:
    """The tokenizer.json of a layout: t5-small's changed so, tokens added by HF itself."""
    if layout in NLLB_LAYOUTS:
        spec = json.loads(gzip.decompress(NLLB.read_bytes()))
        assert spec["added_tokens"][-1]["normalized"]  # (NLLB's <mask>, as its tokenizer writes it)
        spec["pre_tokenizer"] = NLLB_LAYOUTS[layout]
        spec["decoder"] = NLLB_LAYOUTS[layout]["pretokenizers"][1]
        return json.dumps(spec)
    spec = json.loads(gzip.decompress(T5.read_bytes()))
    pre_tokenizer, strip = LAYOUTS[layout]
    if pre_tokenizer is not None:
        spec["pre_tokenizer"] = pre_tokenizer
        spec["decoder"] = pre_tokenizer if pre_tokenizer["type"] == "Metaspace" else pre_tokenizer["pretokenizers"][1]
    if strip:
        spec["normalizer"] = {"type": "Sequence", "normalizers": [STRIP, spec["normalizer"]]}
    for entry in spec["added_tokens"]:
        if entry["content"] == "<extra_id_0>":
            entry["normalized"] = True
    hf = tokenizers.Tokenizer.from_str(json.dumps(spec))
    hf.add_tokens([AddedToken(content, **flags) for content, flags in ADDED])
    return hf.to_str()


@functools.cache
def built(layout: str):
    """``(HF's tokenizer, {backend: wordsplit Tokenizer}, compat Tokenizer or None)``."""
    text = file_text(layout)
    vocab = read_hf_tokenizer_json(text.encode(), source=f"{layout}.json")
    compat = None if layout in NLLB_LAYOUTS else CompatTokenizer.from_str(text)
    return (tokenizers.Tokenizer.from_str(text),
            {backend: TokenizerOptions(backend=backend).build(vocab) for backend in BACKENDS}, compat)


def check(layout: str, text: str) -> None:
    """Both backends' ids and char offsets, and the compat encoding's fields, are HF's."""
    hf, toks, compat = built(layout)
    expected = hf.encode(text, add_special_tokens=False)
    offsets = [tuple(o) for o in expected.offsets]
    python = toks["python"].encode_with_offsets(text, allowed_special="all")
    assert (python.ids, python.char_offsets) == (expected.ids, offsets), (layout, text)
    assert toks["python"].encode(text, allowed_special="all") == expected.ids, (layout, text)
    with mock.patch.object(PythonEngine, "encode", side_effect=AssertionError("Python ran")):
        assert toks["native"].encode(text, allowed_special="all") == expected.ids, (layout, text)
        # (a Unigram pipeline's offsets are the core's; a BPE's the Python engine's, as for every
        # SentencePiece-style BPE file)
        with mock.patch.object(PythonEngine, "encode_with_offsets", side_effect=AssertionError("Python ran")) \
                if compat is not None else contextlib.nullcontext():
            native = toks["native"].encode_with_offsets(text, allowed_special="all")
    assert (native.ids, native.char_offsets) == (expected.ids, offsets), (layout, text)
    assert (native.byte_offsets, native.word_ids) == (python.byte_offsets, python.word_ids), (layout, text)
    if compat is not None:
        theirs, mine = hf.encode(text), compat.encode(text)
        assert (mine.ids, mine.tokens, mine.offsets, mine.word_ids) == \
            (theirs.ids, theirs.tokens, theirs.offsets, theirs.word_ids), (layout, text)


TEXTS = ["a<x>b c", "a <x> b", "<x>a", " <x>a", "a<x><x>b  c<x>", "ab<x>", "  a<x>", "a <m> b", " <m>  b",
         "a<m>b", "q hi there", "hi hi", " hi", "a " + SPACE + "yo b", "ayo", "a\u3000<m>\u3000b", "xab ab abx",
         "ab", "<extra_id_0>a <extra_id_0> b", "a<extra_id_0>", "Hello world", "", " ", "  ", "\u00a8a<x>b",
         "\u200b<x>a", "\u200b a<x>", "ﬁ<x>ﬁ", "<X> <x>", SPACE + "<x>" + SPACE, "a\t<x>\nb", "<x>", "</s><x> b",
         "a</s>b<x>c d", "<m><m>", "😀<x>😀 x"]


@pytest.mark.parametrize("layout", [*LAYOUTS, *NLLB_LAYOUTS])
def test_fixed_texts_are_hfs(layout):
    for text in [*TEXTS, "<mask>a <mask> b", "a<mask>"]:
        check(layout, text)


@pytest.mark.parametrize("layout", ["t5", "t5-first", "metaspace-first-strip", "nllb-words"])
def test_the_files_read_with_their_flags_and_run_natively(layout):
    hf, toks, _ = built(layout)
    vocab = toks["python"].vocab
    assert isinstance(vocab.pipeline.normalizer, Metaspace)
    assert vocab.pipeline.normalizer.whitespace_split == layout.startswith(("t5", "nllb"))
    if layout.startswith("nllb"):
        assert vocab.literal_flags["<mask>"] == NORMALIZED | LSTRIP
        return
    flags = vocab.literal_flags
    assert flags["<x>"] == flags[" hi"] == flags["<extra_id_0>"] == NORMALIZED
    assert (flags["<m>"], flags["ab"]) == (NORMALIZED | LSTRIP | RSTRIP, NORMALIZED | SINGLE_WORD)
    native = toks["native"]
    assert native._engine.native and not native._engine._python, "the native backend runs the pipeline itself"


# What HF 0.23 gives (its tokens), which wordsplit's compat encodings reproduce (check):
# layout → [(text, HF's tokens without the post-processor's)].
HF_RULES = {
    # Each word of each part gets its ▁; the white space goes, the token's own span stays.
    "t5": [("a<x>b c", ["▁", "a", "<x>", "▁", "b", "▁", "c"]),
           ("a <m> b", ["▁", "a", " <m> ", "▁", "b"]),
           # (T5's map makes ▁ and U+3000 spaces: found as " yo", and " <m>" is the string)
           ("a ▁yo b", ["▁", "a", " yo", "▁", "b"]),
           ("a\u3000<m>", ["▁", "a", " <m>"])],
    # first: nothing after a token gets a ▁, nor a word after the first.
    "t5-first": [("a<x>b c", ["▁", "a", "<x>", "b", "c"]), ("<x>a b", ["<x>", "a", "b"])],
    # Strip dropped the input's first characters: no ▁ at all, with Metaspace alone too.
    "t5-first-strip": [("  a<x>b", ["a", "<x>", "b"])],
    "metaspace-first-strip": [("  a<x>b", ["a", "<x>", "b"]), ("a<x>b", ["▁", "a", "<x>", "b"])],
    # Metaspace alone keeps a ▁ of each space, "always" one before each part.
    "metaspace-always": [("a <x> b", ["▁", "a", "▁", "<x>", "▁", "b"])],
}


@pytest.mark.parametrize("layout", HF_RULES)
def test_hfs_rules(layout):
    hf, _, compat = built(layout)
    for text, tokens in HF_RULES[layout]:
        assert hf.encode(text, add_special_tokens=False).tokens == tokens, (layout, text)
        assert compat.encode(text, add_special_tokens=False).tokens == tokens, (layout, text)
        check(layout, text)


def test_compat_pairs_batches_and_pretokenized_words_are_hfs():
    hf, _, compat = built("t5")
    pairs = [("a<x>b c", " hi <m>\u3000x"), ("<extra_id_0> ab", "")]
    for theirs, mine in zip(hf.encode_batch(pairs), compat.encode_batch(pairs)):
        assert (mine.ids, mine.tokens, mine.offsets, mine.word_ids, mine.type_ids) == \
            (theirs.ids, theirs.tokens, theirs.offsets, theirs.word_ids, theirs.type_ids)
    words = ["a<x>b", " c", "<m> d"]
    theirs, mine = hf.encode(words, is_pretokenized=True), compat.encode(words, is_pretokenized=True)
    assert (mine.ids, mine.tokens, mine.offsets, mine.word_ids) == \
        (theirs.ids, theirs.tokens, theirs.offsets, theirs.word_ids)


ALPHABET = ["<x>", "<X>", " hi", "hi", SPACE + "yo", "yo", "<m>", "ab", "<extra_id_0>", "</s>", "<mask>", " ", "  ",
            "\t", "\n", "\u3000", "\u00a0", "\u200b", "a", "b", "Hello", SPACE, "é", "ﬁ", "\u00a8", "😀", "x"]
EXAMPLES = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@EXAMPLES
@given(layout=st.sampled_from([*LAYOUTS, *NLLB_LAYOUTS]),
       text=st.lists(st.one_of(st.sampled_from(ALPHABET), st.text(max_size=3)), max_size=12).map("".join))
def test_hypothesis_texts_are_hfs(layout, text):
    check(layout, text)
