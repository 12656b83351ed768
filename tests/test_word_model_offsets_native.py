"""The core's offsets of word models (WordPiece, WordLevel): the ``wordpiece`` and ``word-level``
encoders' token lengths (the part of its piece each token stands for, ``##`` and ``[UNK]``
included), placed through the BERT normalizer's alignment, BERT's pre-tokenizer run natively and
the second pass of ``normalized`` added tokens, on every word-model file of tests/data/wordpiece:

* ``backend="native"`` gives the Python engine's ``encode_with_offsets`` (ids, byte and char
  offsets, word ids) with neither the Python engine nor the Python spanner called, on corpus
  lines, adversarial texts (accents, CJK, control and format characters, words over
  ``max_input_chars_per_word``, characters no token spells, special and added tokens in the
  text, surrogates, the empty text) and hypothesis' texts;
* ``wordsplit.compat.tokenizers`` on them gives HF tokenizers 0.23's ``Encoding`` offsets, ids,
  tokens and word ids, natively too;
* a word model with a plug-in stage (whose encoder cannot say where its tokens are) keeps the
  Python engine's offsets.
"""

from __future__ import annotations

import functools
import gzip
from pathlib import Path
from unittest import mock

import pytest
import tokenizers
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from llamacpp_cases import unpacked
from test_wordpiece_native import ALPHABET
from wordsplit import TokenizerOptions, load_vocab
from wordsplit.compat.tokenizers import Tokenizer as CompatTokenizer
from wordsplit.core import extension
from wordsplit.engines.python import PythonEngine
from wordsplit.spanners import SPANNERS
from wordsplit.spec import WordLevel, WordPiece

pytestmark = pytest.mark.skipif(extension() is None, reason="the native core is not built")

DATA = Path(__file__).parent / "data" / "wordpiece"
CORPUS = Path(__file__).parent / "data" / "corpus"
# Every real file of a word model in tests/data/wordpiece (CLIP's and the other BPE files there
# are HF's BPE over characters, whose offsets stay the Python engine's).
JSONS = sorted(path.parent.name for path in DATA.glob("*/tokenizer.json*")
               if isinstance(load_vocab(path).pipeline.model, (WordPiece, WordLevel)))
# llama.cpp's WordPiece (BAAI's bge-small-en-v1.5 as a GGUF file: llama.cpp's normalizer and
# spanner, tests/data/gguf).
BGE = "ggml-vocab-bert-bge.gguf.xz"
FILES = JSONS + [BGE]

ADVERSARIAL = [
    "", " ", "\t\n\r ", "Hello, world!", "Unaffable!", "Héllo WORLD naïve café Ångström İstanbul ǅ ẞ ß",
    "e\u0301 combining a\u0308\u0323 \u0300alone \u0f73 \u0344 Zalgo z̷̢͔a̴l̸g̶o̵",
    "中文字符 mixed 日本語のテキスト 한국어 𠀀𪜀 \U0002f800\uf900", "中09.52文 англ.中",
    "\x00\x01\x7f\ufffd \u200b zero\u200dwidth\u00ad soft\ufeffbom \u202e rtl \ue000 \U000e0041",
    "tab\tnew\nline\r\n\u2028\u2029 \u3000 \xa0nbsp \x85 \x1c",
    "ﬁ ligature Ⅻ ① ＦＵＬＬ ＷＩＤＴＨ ㍻", "emoji 😀 🦀🦀 👩‍👩‍👧‍👦 🇫🇷 \U0010fffd",
    # max_input_chars_per_word (100): a word of 100 characters, of 101, of 101 with accents
    "a" * 100, "a" * 101, "x" * 99 + " " + "y" * 100 + " " + "z" * 250, "é" * 60 + " " + "b" * 100, "é" * 101,
    "supercalifragilisticexpialidocious antidisestablishmentarianism " * 3,
    # special and added tokens: alone, inside words, after control characters, normalized ones
    "[CLS] [SEP] [MASK] text [UNK] [PAD]", "x[MASK]y[SEP][SEP] [cls] [Mask]", "09.52 англ. added tokens",
    "x09.52y АНГЛ. 09\u200b.52 0\x009.52 09.52.52 англ.англ.", "\u3000 09.52\u3000[MASK]\t",
    "ATGGCGTAA codons ATG GCG TAA atg ATGX [UNK]ATG",
    "don't stop U.S.A. ...!!!??? «quotes» „x“ 123,456.78 ٣٤٥ ४५६",
    "def f(x):\n    return x ** 2  # square\n", "http://example.com/path?q=1&r=2#frag email@example.com",
    # surrogates: a pair (one character) and a lone one (U+FFFD for the encode)
    "a\ud83d\ude00b \udc00c", "\ud800",
]


def corpus_lines(limit: int = 60) -> list[str]:
    lines: list[str] = []
    for name in ("prose", "code", "multilingual", "adv_whitespace", "adv_random_unicode"):
        text = gzip.decompress((CORPUS / f"{name}.txt.gz").read_bytes()).decode("utf-8")
        lines += [line for line in text.split("\n") if line][:limit]
    return lines


TEXTS = ADVERSARIAL + corpus_lines()


def path_of(name: str) -> Path:
    return next(DATA.glob(f"{name}/tokenizer.json*"))


UNPACKED: dict[str, Path] = {}


@pytest.fixture(scope="module", autouse=True)
def unpack_dir(tmp_path_factory):
    """Where the GGUF file is decompressed to."""
    UNPACKED["dir"] = tmp_path_factory.mktemp("word-model-offsets")


@functools.cache
def both(name: str):
    """The Python and native tokenizers of file ``name``."""
    vocab = load_vocab(unpacked(name, UNPACKED["dir"]) if name == BGE else path_of(name))
    return tuple(TokenizerOptions(backend=backend).build(vocab) for backend in ("python", "native"))


def python_never_runs():
    """Patches that make any call of the Python engine's offsets or of the Python split program
    fail the test."""
    spanner = SPANNERS.get("hf-split")
    error = AssertionError("Python ran")
    return (mock.patch.object(PythonEngine, "encode_with_offsets", side_effect=error),
            mock.patch.object(spanner, "spans", side_effect=error),
            mock.patch.object(spanner, "split", side_effect=error))


def places(result) -> tuple:
    return result.ids, result.byte_offsets, result.char_offsets, result.word_ids


def assert_native_is_python(name: str, text: str) -> None:
    python, native = both(name)
    for kwargs in ({"allowed_special": "all"}, {"disallowed_special": ()}):
        engine, split, spans = python_never_runs()
        with engine, split, spans:
            got = native.encode_with_offsets(text, **kwargs)
        expected = python.encode_with_offsets(text, **kwargs)
        assert places(got) == places(expected), (name, text, kwargs)


def test_every_word_model_file_is_here():
    assert set(JSONS) == {"all-MiniLM-L6-v2", "bert-base-chinese", "bert-base-multilingual-cased", "bert-wiki",
                          "fastberttokenizer-issue-100", "genslm-codon-wordlevel"}


@pytest.mark.parametrize("name", FILES)
def test_the_native_path_is_taken(name):
    engine = both(name)[1].native_engine()
    assert engine.native and not engine.python_offsets
    assert engine._offsets_engine is None


@pytest.mark.parametrize("name", FILES)
def test_native_offsets_are_the_python_engines(name):
    for text in TEXTS:
        assert_native_is_python(name, text)
    assert both(name)[1].native_engine()._offsets_engine is None


def test_added_tokens_of_the_second_pass_are_placed_as_in_python():
    # fastberttokenizer-issue-100's 1,639 added tokens are `normalized`: found in BERT's
    # normalized text, placed at the original text their characters come from.
    python, _ = both("fastberttokenizer-issue-100")
    added = sorted(python.vocab.added_tokens)
    assert len(added) > 1000
    around = ["", " ", "x", "中", "\x00", "\u200b", "É", "."]
    for k, token in enumerate(added[::7]):
        left, right = around[k % len(around)], around[(k // len(around)) % len(around)]
        assert_native_is_python("fastberttokenizer-issue-100", f"{left}{token}{right} {token.upper()}{token}")


ADDED = st.sampled_from(["09.52", "англ.", "01.01", "[MASK]", "[CLS]", "[UNK]", "ATG", "##", "a" * 101])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.lists(ALPHABET | ADDED, max_size=60).map("".join), name=st.sampled_from(FILES))
def test_native_offsets_are_the_python_engines_on_hypothesis_text(text, name):
    assert_native_is_python(name, text)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.text(max_size=80), name=st.sampled_from(FILES))
def test_native_offsets_on_any_text(text, name):
    assert_native_is_python(name, text)


# -- HF's Encoding through the compat layer -------------------------------------------------------

COMPAT_FILES = ["all-MiniLM-L6-v2", "bert-base-multilingual-cased", "fastberttokenizer-issue-100",
                "genslm-codon-wordlevel"]


@functools.cache
def compat_pair(name: str):
    """HF's tokenizer of the file and wordsplit's drop-in, both without the file's padding and
    truncation."""
    data = path_of(name).read_bytes()
    text = (gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data).decode("utf-8")
    pair = tokenizers.Tokenizer.from_str(text), CompatTokenizer.from_str(text)
    for tok in pair:
        tok.no_padding()
        tok.no_truncation()
    return pair


def assert_compat_is_hfs(name: str, texts: list[str]) -> None:
    hf, ours = compat_pair(name)
    # (HF's binding takes no surrogate)
    texts = [text for text in texts if not any("\ud800" <= c <= "\udfff" for c in text)]
    engine, split, spans = python_never_runs()
    with engine, split, spans:
        got = ours.encode_batch(texts)
    for text, expected, encoding in zip(texts, hf.encode_batch(texts), got):
        assert (encoding.ids, encoding.offsets, encoding.tokens, encoding.word_ids) == \
            (expected.ids, expected.offsets, expected.tokens, expected.word_ids), (name, text)


@pytest.mark.parametrize("name", COMPAT_FILES)
def test_compat_offsets_are_hfs(name):
    assert_compat_is_hfs(name, TEXTS)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=st.lists(st.lists(ALPHABET | ADDED, max_size=40).map("".join), min_size=1, max_size=4),
       name=st.sampled_from(COMPAT_FILES))
def test_compat_offsets_are_hfs_on_hypothesis_text(texts, name):
    assert_compat_is_hfs(name, texts)


# -- the Python engine's offsets where the core cannot give them ----------------------------------


def test_a_plugin_encoder_keeps_the_python_engines_offsets():
    from wordsplit.encoders import ENCODERS, get_encoder

    class Plugin(get_encoder("wordpiece")):
        """The Python WordPiece encoder under a plug-in's name: the core calls it per piece and
        cannot tell where its tokens are."""

    ENCODERS.register("test-wordpiece-plugin")(Plugin)
    try:
        vocab = load_vocab(path_of("all-MiniLM-L6-v2"))
        tok = TokenizerOptions(backend="native", encoder="test-wordpiece-plugin").build(vocab)
        engine = tok.native_engine()
        assert not engine.native and engine.python_offsets
        python = both("all-MiniLM-L6-v2")[0]
        for text in ADVERSARIAL[:12]:
            assert places(tok.encode_with_offsets(text, allowed_special="all")) == \
                places(python.encode_with_offsets(text, allowed_special="all")), text
    finally:
        ENCODERS.remove("test-wordpiece-plugin")
