"""The core's precompiled character maps (``crates/wordsplit/src/normalizers/charsmap.rs``,
``precompiled.rs``, ``graphemes.rs`` and ``sentencepiece.rs``) against the Python package's
(``wordsplit.normalizers.precompiled`` and ``SentencePieceNormalizer``), which are held to
the oracles here too: every real map of tests/data and the maps ``sentencepiece`` 0.2.3 builds
(``nmt_nfkc``, ``nfkc``, ``nmt_nfkc_cf``, ``nfkc_cf``), on hypothesis' texts; then whole
encodes of the native engine, whose normalizer is then native, against ``sentencepiece`` and
HF ``tokenizers``."""

from __future__ import annotations

import base64
import functools
import gzip
import hashlib
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
import sentencepiece
import tokenizers
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from conftest import DATA
from wordsplit import TokenizerOptions, load_vocab, spec
from wordsplit.core import extension
from wordsplit.engines.native import native_normalizer
from wordsplit.formats.sentencepiece import read_model_proto
from wordsplit.normalizers import ProgramNormalizer
from wordsplit.normalizers.precompiled import charsmap_of, hf_normalize
from wordsplit.normalizers.sentencepiece import SentencePieceNormalizer
from wordsplit.offsets import program_alignment

native = extension()
pytestmark = pytest.mark.skipif(native is None, reason="the native core is not built")

UNIGRAM = DATA / "unigram"
# The SentencePiece models of tests/data with a character map (see tests/data/unigram/SOURCES.md).
MODEL_FILES = ["test_sentencepiece.model.gz", "test_sentencepiece_with_bytefallback.model.gz",
               "sentencepiece-test_model.model.gz", "bpemb-en.wiki.bpe.vs100000.model.gz",
               "opus-mt-en-mg/source.spm.gz", "ortx-nmt/vocab.joint.spm.gz"]
BUILT_RULES = ["nmt_nfkc", "nfkc", "nmt_nfkc_cf", "nfkc_cf"]


@functools.cache
def model_bytes(name: str) -> bytes:
    return gzip.decompress((UNIGRAM / name).read_bytes())


@functools.cache
def built_map(rule: str) -> bytes:
    """The map ``sentencepiece`` builds for the normalization rule ``rule`` (a tiny CHAR model
    trained with it)."""
    out = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter(["Hello world, ＡＢＣ ﬁ."] * 20), model_writer=out, vocab_size=30,
        model_type="char", normalization_rule_name=rule, minloglevel=2)
    return read_model_proto(out.getvalue(), rule).precompiled_charsmap


@functools.cache
def charsmaps() -> dict[str, bytes]:
    """Every distinct map: the models', t5-small's tokenizer.json's, and the built ones."""
    maps = {name: read_model_proto(model_bytes(name), name).precompiled_charsmap for name in MODEL_FILES}
    t5 = json.loads(gzip.decompress((UNIGRAM / "t5-small" / "tokenizer.json.gz").read_bytes()))
    maps["t5-small"] = base64.b64decode(t5["normalizer"]["precompiled_charsmap"])
    maps.update({rule: built_map(rule) for rule in BUILT_RULES})
    seen, distinct = set(), {}
    for name, data in maps.items():
        digest = hashlib.sha256(data).digest()
        if data and digest not in seen:
            seen.add(digest)
            distinct[name] = data
    return distinct


MAP_NAMES = ["test_sentencepiece.model.gz", "test_sentencepiece_with_bytefallback.model.gz",
             "sentencepiece-test_model.model.gz", "opus-mt-en-mg/source.spm.gz", "ortx-nmt/vocab.joint.spm.gz",
             *BUILT_RULES]

# What maps change and what clusters join: accents and marks, Hangul (syllables and jamo), emoji
# with ZWJ, skin tones and flags, Indic conjuncts through a virama (GB9c, and a virama after a
# no-break space, which does not join), Prepend, CR LF and controls, full-width and compatibility
# forms, text that grows under NFKC, white space of every kind.
CHARS = (
    "aAzZ éÉeE\u0301\u0308\u0323\u0327ÅÅİıßẞΣσǅﬁﬃⅫ①Ｆ㍻ｶﾞ\u0f73\U0001d165Ꭰ中한각\u1100\u1161\u11a8\u11a8"
    "👩\u200d👧\U0001f3fd🇫🇷\ufe0f\u0915\u094d\u0937\u093f\u0924\u200d\u09cd\u0995\xa0\u0600\u0d4e"
    "\r\n\t\x00\x01\x7f\x85\u2028\u3000\u200b\u00ad\ufeff!?.,  ﷺ㈱⑽\U0001f600▁"
)
ALPHABET = st.sampled_from(list(CHARS)) | st.characters(exclude_categories=("Cs",))
TEXTS = st.lists(ALPHABET, max_size=40).map("".join)


def _b64(name: str) -> str:
    return base64.b64encode(charsmaps()[name]).decode()


def assert_alignment(stage: spec.Precompiled, text: str) -> None:
    """The core aligns each character as the Python program aligns it (the core says None for
    an alignment of each character to itself)."""
    normalized, alignment = program_alignment(ProgramNormalizer(spec.Sequence((stage,))), text)
    if alignment == [(i, i + 1, True) for i in range(len(text))]:
        alignment = None
    parts = native.native_alignment(json.dumps(stage.to_json()), text)
    assert parts == (None if alignment is None else (normalized, alignment, 0))


def test_every_map_is_distinct_and_present():
    assert set(charsmaps()) == set(MAP_NAMES), "the maps of tests/data changed: update MAP_NAMES"


@pytest.mark.parametrize("name", MAP_NAMES)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=TEXTS)
@example(text="\xa0\u094d\u0915\u0915\u094d\u200d\u0937")
@example(text="\u1100\u1161\u11a8각\r\n👩\u200d👩\u200d👧ﷺ")
def test_hf_precompiled_is_the_python_reference_and_hf(name, text):
    charsmap = _b64(name)
    stage = spec.Precompiled(charsmap)
    expected = hf_normalize(charsmap_of(charsmap), text)
    assert native.native_normalize(json.dumps(stage.to_json()), [text]) == [expected]
    assert tokenizers.normalizers.Precompiled(charsmaps()[name]).normalize_str(text) == expected
    assert_alignment(stage, text)


@pytest.mark.parametrize("name", MAP_NAMES)
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=TEXTS, flags=st.integers(0, 15))
@example(text="  \u3000 a\u3000\u3000b  ", flags=3)
@example(text="\u200b", flags=11)
def test_sentencepiece_normalizer_is_the_python_reference(name, text, flags):
    dummy, extra, escape, suffix = (bool(flags & bit) for bit in (1, 2, 4, 8))
    stage = spec.SentencePieceNormalizer(add_dummy_prefix=dummy, remove_extra_whitespaces=extra,
                                         escape_whitespaces=escape, treat_whitespace_as_suffix=suffix,
                                         charsmap=_b64(name))
    expected = SentencePieceNormalizer(stage)(text)
    assert native.native_normalize(json.dumps(stage.to_json()), [text]) == [expected]


@functools.cache
def model_normalizers(name: str) -> tuple[sentencepiece.SentencePieceProcessor, str]:
    """The model's ``sentencepiece`` processor and the JSON of wordsplit's normalizer stage
    for it (which the core runs), made once per model rather than once per example: loading
    BPEmb's 100,000 pieces each time took most of the test's time."""
    stage = load_vocab(UNIGRAM / name).normalizer
    assert native_normalizer(stage)
    return sentencepiece.SentencePieceProcessor(model_proto=model_bytes(name)), json.dumps(stage.to_json())


@pytest.mark.parametrize("name", ["test_sentencepiece.model.gz", "sentencepiece-test_model.model.gz",
                                  "bpemb-en.wiki.bpe.vs100000.model.gz"])
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=TEXTS)
def test_a_models_normalizer_is_sentencepieces(name, text):
    processor, stage_json = model_normalizers(name)
    normalized = native.native_normalize(stage_json, [text])[0]
    assert normalized == processor.normalize(text)


def compile_charsmap(rules: dict[str, str]) -> bytes:
    """A precompiled map of ``rules`` (key → output): a double-array trie laid out a node at a
    time at the first free place, as ``charsmap_build.rs`` lays it out."""
    trie: dict = {}
    outputs = bytearray()
    for key, output in rules.items():
        node = trie
        for b in key.encode():
            node = node.setdefault(b, {})
        node[None] = len(outputs)
        outputs += output.encode() + b"\0"
    units: dict[int, int] = {0: 0}
    bases: set[int] = set()

    def place(node: dict, at: int) -> None:
        labels = [b for b in node if b is not None]
        value = node.get(None)
        base = next(b for b in range(1, 1 << 21) if b not in bases and (value is None or b not in units)
                    and all(b ^ c not in units for c in labels))
        bases.add(base)
        units[at] = (base ^ at) << 10 | (1 << 8 if value is not None else 0) | units[at] & 0x800000FF
        if value is not None:
            units[base] = 0x80000000 | value
        for c in labels:
            units[base ^ c] = c
        for c in sorted(labels):
            place(node[c], base ^ c)

    place(trie, 0)
    size = max(units) + 1
    return (4 * size).to_bytes(4, "little") + b"".join(
        units.get(i, 0).to_bytes(4, "little") for i in range(size)) + bytes(outputs)


# Every character of the alphabet a key of its own output, its first letter: a cluster of
# several characters and under 6 bytes then becomes its first character, so the text shows
# where the clusters are cut.
CLUSTER_MAP = base64.b64encode(compile_charsmap({c: c for c in sorted(set(CHARS) - {"\0"})})).decode()


@settings(max_examples=600, deadline=None)
@given(text=st.lists(st.sampled_from(CHARS), max_size=30).map("".join))
@example(text="\xa0\u094d\u0915\u0915\u094d\u200d\u0937\u093f")
@example(text="\u0600\u0600\n\u0600a\r\n\U0001f3fd\u200d👩\u1100\u1100\u11a8")
def test_clusters_are_cut_as_the_python_reference_and_hf_cut_them(text):
    stage = spec.Precompiled(CLUSTER_MAP)
    expected = hf_normalize(charsmap_of(CLUSTER_MAP), text)
    assert native.native_normalize(json.dumps(stage.to_json()), [text]) == [expected]
    assert tokenizers.normalizers.Precompiled(base64.b64decode(CLUSTER_MAP)).normalize_str(text) == expected
    assert_alignment(stage, text)


# -- whole encodes -----------------------------------------------------------------------------

MULTILINGUAL = (
    "Ｈｅｌｌｏ,  ｗｏｒｌｄ！ naïve café ﬁnal Ⅻ ① ㍻ ｶﾞ — “quotes” ‘x’ … \u3000full\u3000width\n"
    "Schöne Grüße aus Köln; Ærøskøbing; İstanbul'da ŞIRKET; Ελληνικά ΣΊΣΥΦΟΣ; Русский язык.\n"
    "日本語のテキスト、カタカナ ｶﾀｶﾅ と ひらがな。中文：简体字與繁體字。한국어 텍스트 각 \u1100\u1161\u11a8.\n"
    "हिन्दी क्षत्रिय द्वार; বাংলা ক্ষ; தமிழ்; ไทย ภาษา; العربية ﷺ ١٢٣; עברית.\n"
    "Emoji: 👩\u200d👩\u200d👧 👍🏽 🇫🇷🇩🇪 ❤\ufe0f e\u0301 a\u0308\u0323 \u00ad\u200bsoft\r\n\tend  "
)


def _texts() -> list[str]:
    corpus = gzip.decompress((DATA / "corpus" / "multilingual.txt.gz").read_bytes()).decode()
    lines = [line for line in corpus.splitlines() if line.strip()][:200]
    return [MULTILINGUAL, *MULTILINGUAL.splitlines(), *lines]


@pytest.mark.parametrize("name", ["bpemb-en.wiki.bpe.vs100000.model.gz", "test_sentencepiece_bpe.model.gz",
                                  "test_sentencepiece.model.gz", "sentencepiece-test_ja_model.model.gz",
                                  "opus-mt-en-mg/source.spm.gz"])
def test_native_encodes_of_models_with_a_map_are_sentencepieces(name):
    vocab = load_vocab(UNIGRAM / name)
    assert vocab.normalizer.charsmap and native_normalizer(vocab.normalizer)
    tok = TokenizerOptions(backend="native").build(vocab)
    processor = sentencepiece.SentencePieceProcessor(model_proto=model_bytes(name))
    for text in _texts():
        assert tok.encode_ordinary(text) == processor.encode(text), text[:80]


def test_native_encodes_through_hf_precompiled_are_hfs(tmp_path):
    """t5-small's tokenizer.json with a Metaspace pre-tokenizer alone (T5's WhitespaceSplit
    before it makes regex steps, which the core does not run): its map then Metaspace."""
    data = json.loads(gzip.decompress((UNIGRAM / "t5-small" / "tokenizer.json.gz").read_bytes()))
    data["pre_tokenizer"] = {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": True}
    data["decoder"] = {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": True}
    data["post_processor"] = None
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    vocab = load_vocab(path)
    assert vocab.normalizer.before == spec.Sequence((spec.Precompiled(data["normalizer"]["precompiled_charsmap"]),))
    assert native_normalizer(vocab.normalizer)
    tok = TokenizerOptions(backend="native").build(vocab)
    oracle = tokenizers.Tokenizer.from_file(str(path))
    for text in _texts():
        assert tok.encode_ordinary(text) == oracle.encode(text, add_special_tokens=False).ids, text[:80]


def test_the_grapheme_tables_are_generated_from_the_regex_module_in_use():
    """The core's cluster properties are the ``regex`` module's, which the Python reference cuts
    clusters with (``tools/gen_grapheme_tables.py --check``)."""
    script = Path(__file__).resolve().parent.parent / "tools" / "gen_grapheme_tables.py"
    result = subprocess.run([sys.executable, str(script), "--check"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
