"""Offsets where a normalizer program or a Unicode form changed the text: ``char_offsets``
equal to HF tokenizers' ``Encoding.offsets`` for every normalizer step type and combinations of
them, on both backends, for tokenizers made by editing Qwen3's tokenizer.json or with HF's
API; and the step-by-step alignment (``wordsplit.offsets.program_alignment``) itself."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer as HFTokenizer
from tokenizers import normalizers as hf_normalizers

from conftest import BACKENDS
import hf_files
from wordsplit import TokenizerOptions, load_vocab
from wordsplit.normalizer_programs import normalizer_program
from wordsplit.normalizers import ProgramNormalizer, get_normalizer
from wordsplit.offsets import program_alignment, unicode_changes
from wordsplit.spec import Nfd, Nfkc, Nfkd, Sequence

BYTE_LEVEL = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": True}


def _seq(*steps: dict) -> dict:
    return {"type": "Sequence", "normalizers": list(steps)}


NFC, NFD, NFKC, NFKD = ({"type": form} for form in ("NFC", "NFD", "NFKC", "NFKD"))
LOWERCASE = {"type": "Lowercase"}

# name: (tokenizer.json normalizer, ByteLevel's add_prefix_space)
CASES = {
    # Qwen3's normalizer with add_prefix_space: the program [NFC, PrefixSpace].
    "nfc-prefix-space": (NFC, True),
    "nfkc-lowercase": (_seq(NFKC, LOWERCASE), False),
    "lowercase-nfc": (_seq(LOWERCASE, NFC), True),
    "replace-multi-char": (_seq(NFC, {"type": "Replace", "pattern": {"String": "ab"}, "content": "XYZ"}), False),
    "replace-empty-content": (_seq(NFD, {"type": "Replace", "pattern": {"String": "ab"}, "content": ""}), False),
    "replace-one-by-two": (_seq({"type": "Replace", "pattern": {"String": " "}, "content": "\u2581\u2581"}, NFC),
                           False),
    "replace-regex": (_seq(LOWERCASE, {"type": "Replace", "pattern": {"Regex": "\\s+|\\p{N}+"}, "content": "__"}),
                      False),
    "prepend": (_seq(NFD, {"type": "Prepend", "prepend": "\u2581x"}), False),
    "prepend-then-nfc": (_seq({"type": "Prepend", "prepend": "\u0301"}, NFC), False),
    "strip-both": (_seq({"type": "Strip", "strip_left": True, "strip_right": True}, NFC), False),
    "strip-left": (_seq(NFKC, {"type": "Strip", "strip_left": True, "strip_right": False}), True),
    "strip-right": (_seq(NFKD, {"type": "Strip", "strip_left": False, "strip_right": True}), False),
    "strip-accents": (_seq(NFD, {"type": "StripAccents"}, LOWERCASE), False),
    "bert-like": (_seq(NFKD, {"type": "StripAccents"}, LOWERCASE, NFC), True),
    "nfd": (NFD, False),
    "nfkc": (NFKC, False),
    "nfkd": (NFKD, False),
    "nfkd-prefix-space": (NFKD, True),
}

TEXTS = [
    "é ậ café!",  # decomposed accents NFC composes in several places
    "e\u0301 a\u0323\u0302 x e\u0301e\u0301 \u1e0b\u0323 \u212b \u0344",
    "\ufb01ne \ufb01 ab abab cab xab",
    "İstanbul ΟΔΟΣ İİ Straße",  # İ lowercases to two characters
    "  \u3000 tab\t x\u00b2 \u2460 ½ \u3392  ",
    "日本語のテキスト 한국어 \u1100\u1161\u11a8 中文",
    "emoji 😀😀 ok 👍🏽 👨\u200d👩\u200d👧",
    "x  12 y 3.5",
    "\u0301\u0301a",
    "",
    " ",
    "ab",
    "İ",
    "a<think>B\u0301 C<|endoftext|> d\ufb01 ",
]


@pytest.fixture(scope="module")
def small_spec() -> dict:
    """Qwen3's first 3,000 tokens, the merges that make them, one special and one added token."""
    return hf_files.small_spec(added_tokens=hf_files.SMALL_ADDED_TOKENS)


def _built(small_spec: dict, name: str, directory: Path):
    normalizer, prefix_space = CASES[name]
    spec = copy.deepcopy(small_spec)
    spec["normalizer"] = normalizer
    spec["pre_tokenizer"] = {**BYTE_LEVEL, "add_prefix_space": prefix_space}
    return hf_files.load_both(spec, directory)


def _assert_offsets_equal(hf, vocab, texts) -> None:
    for backend in BACKENDS:
        tok = TokenizerOptions(backend=backend).build(vocab)
        for text in texts:
            expected = hf.encode(text, add_special_tokens=False)
            result = tok.encode_with_offsets(text, allowed_special="all")
            assert result.ids == expected.ids, (backend, text)
            assert result.char_offsets == expected.offsets, (backend, text)
            assert result.word_ids == expected.word_ids, (backend, text)


@pytest.fixture(scope="module")
def built(small_spec, tmp_path_factory):
    cache: dict = {}

    def get(name: str):
        if name not in cache:
            cache[name] = _built(small_spec, name, tmp_path_factory.mktemp(name))
        return cache[name]

    return get


@pytest.mark.parametrize("name", sorted(CASES))
def test_offsets_equal_hf(built, name):
    hf, vocab = built(name)
    forms = {"nfd": Nfd(), "nfkc": Nfkc(), "nfkd": Nfkd()}
    assert vocab.normalizer == forms[name] if name in forms else isinstance(vocab.normalizer, Sequence)
    _assert_offsets_equal(hf, vocab, TEXTS)


def test_qwen3_with_add_prefix_space_gives_per_token_ranges(small_spec, tmp_path):
    # NFC changes "é" and "ậ" (decomposed) in two places; each token keeps its own range.
    hf, vocab = _built(small_spec, "nfc-prefix-space", tmp_path)
    text = "e\u0301 a\u0323\u0302 cafe\u0301!"
    for backend in BACKENDS:
        result = TokenizerOptions(backend=backend).build(vocab).encode_with_offsets(text)
        assert result.char_offsets == hf.encode(text).offsets
        assert len(set(result.char_offsets)) > 3  # not one range for every token


def test_hf_api_built_normalizers(small_spec, tmp_path):
    """Tokenizers whose normalizer is set with HF's Python API, then saved as tokenizer.json."""
    spec = copy.deepcopy(small_spec)
    spec["normalizer"] = None
    spec["pre_tokenizer"] = BYTE_LEVEL
    base, _ = hf_files.load_both(spec, tmp_path / "base")
    made = {
        "nfkc-lower": hf_normalizers.Sequence([hf_normalizers.NFKC(), hf_normalizers.Lowercase()]),
        "replace-prepend": hf_normalizers.Sequence([
            hf_normalizers.Replace("é", "E\u0301e"), hf_normalizers.Prepend("\u2581"), hf_normalizers.NFC()]),
        "strip-accents": hf_normalizers.Sequence([
            hf_normalizers.NFD(), hf_normalizers.StripAccents(), hf_normalizers.Strip(left=True, right=False)]),
    }
    for name, normalizer in made.items():
        base.normalizer = normalizer
        path = tmp_path / name / "tokenizer.json"
        path.parent.mkdir()
        base.save(str(path))
        hf = HFTokenizer.from_file(str(path))
        vocab = load_vocab(path, cache_dir=tmp_path / name / "cache")
        _assert_offsets_equal(hf, vocab, [*TEXTS, "é café é"])


# Characters normalizers treat specially: combining marks (and their order), compositions,
# compatibility forms and ligatures, İ and Σ, Hangul jamo, whitespace, CJK, emoji, digits.
ALPHABET = st.sampled_from(list(
    "aAbeE xX\t\n \u3000\u00a0İΣσΟß\u0301\u0323\u0302\u0308\u0344\u212b\u1e0b\u00e9\u00c5\ufb01\ufb03\u00b2"
    "\u2460\u00bd\u3392\uff21\u1100\u1161\u11a8\uac00日本😀👍🏽\u200d1234"
))
TEXT = st.lists(st.one_of(ALPHABET, st.sampled_from(["ab", "e\u0301", "<think>", "<|endoftext|>"])),
                max_size=16).map("".join)
FUZZED = ["nfc-prefix-space", "nfkc-lowercase", "replace-multi-char", "replace-empty-content", "replace-regex",
          "prepend", "strip-both", "strip-accents", "bert-like", "nfkd", "nfkc"]


@pytest.mark.parametrize("name", FUZZED)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(text=TEXT)
def test_offsets_equal_hf_on_random_text(built, name, text):
    hf, vocab = built(name)
    _assert_offsets_equal(hf, vocab, [text])


@pytest.mark.parametrize("form", ["NFC", "NFD", "NFKC", "NFKD"])
@settings(max_examples=200, deadline=None)
@given(text=TEXT)
def test_unicode_changes_spell_the_form(form, text):
    changes = unicode_changes(text, form)
    assert "".join(ch for ch, _ in changes) == get_normalizer(form.lower())(text)
    # The changes consume the original characters exactly (HF's transform relies on it).
    assert sum(1 - change for _, change in changes if change <= 0) == len(text)


def test_program_alignment_per_step():
    def aligned(steps, text):
        return program_alignment(ProgramNormalizer(normalizer_program(steps)), text)

    # Replace: every content character is inserted after the match, so aligned to its last character.
    assert aligned([{"type": "Replace", "pattern": {"String": "ab"}, "content": "XYZ"}], "cab") == (
        "cXYZ", [(0, 1, True), (2, 3, False), (2, 3, False), (2, 3, False)])
    # An empty content removes the match; an empty match is aligned to the character before it.
    assert aligned([{"type": "Replace", "pattern": {"String": "ab"}, "content": ""}], "abc") == ("c", [(2, 3, True)])
    assert aligned([{"type": "Replace", "pattern": {"Regex": "$"}, "content": "-"}], "x") == (
        "x-", [(0, 1, True), (0, 1, False)])
    # Lowercase: İ's second character is inserted after the first, aligned to the İ too.
    assert aligned([LOWERCASE], "Aİ") == ("ai\u0307", [(0, 1, False), (1, 2, False), (1, 2, False)])
    # Strip and StripAccents keep the alignment of what they keep.
    assert aligned([NFD, {"type": "StripAccents"}, {"type": "Strip", "strip_left": True, "strip_right": True}],
                   " \u00e9 ") == ("e", [(1, 2, False)])
    # Prepend after NFC: the new text is aligned to the first character's (NFC) alignment.
    assert aligned([NFC, {"type": "Prepend", "prepend": "_"}], "e\u0301x") == (
        "_\u00e9x", [(0, 1, False), (0, 1, False), (2, 3, True)])
    # Text the steps leave as it is has no alignment.
    assert aligned([NFC, LOWERCASE, {"type": "Strip", "strip_left": True, "strip_right": True}], "abc") == (
        "abc", None)
    # PrefixSpace leaves empty text and text starting with a space as they are.
    assert aligned([{"type": "PrefixSpace"}], "") == ("", None)
    assert aligned([{"type": "PrefixSpace"}], " a") == (" a", None)


@pytest.mark.parametrize("name", ["nfc-prefix-space", "replace-regex", "bert-like", "nfkd"])
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(text=TEXT)
def test_native_equals_python(built, name, text):
    _, vocab = built(name)
    python = TokenizerOptions(backend="python").build(vocab).encode_with_offsets(text, allowed_special="all")
    native = TokenizerOptions(backend="native").build(vocab).encode_with_offsets(text, allowed_special="all")
    assert (native.ids, native.byte_offsets, native.char_offsets, native.word_ids) == (
        python.ids, python.byte_offsets, python.char_offsets, python.word_ids)


# -- normalizer programs of literal Replace and Prepend steps, which the core runs -----------

def _replace(pattern: str, content: str) -> dict:
    return {"type": "Replace", "pattern": {"String": pattern}, "content": content}


def _prepend(text: str) -> dict:
    return {"type": "Prepend", "prepend": text}


LITERAL_STEPS = st.one_of(
    st.builds(_replace, st.sampled_from(["ab", " ", "é", "a", "😀", "xx", "\u2581"]),
              st.sampled_from(["", "\u2581", "XYZ", "é", "\u2581\u2581", "b"])),
    st.builds(_prepend, st.sampled_from(["\u2581", "x", "é😀"])),
)
LITERAL_TEXT = st.lists(st.sampled_from(["ab", " ", "é", "a", "😀", "xx", "\u2581", "b", "<think>", "日"]),
                        max_size=10).map("".join)


@pytest.fixture(scope="module")
def literal_built(small_spec, tmp_path_factory):
    """The byte-level vocabulary (and HF's tokenizer) of a literal program, by its steps."""
    cache: dict = {}

    def get(steps: list[dict]):
        key = repr(steps)
        if key not in cache:
            spec = copy.deepcopy(small_spec)
            spec["normalizer"] = _seq(*steps)
            spec["pre_tokenizer"] = BYTE_LEVEL
            cache[key] = hf_files.load_both(spec, tmp_path_factory.mktemp("literal"))
        return cache[key]

    return get


@pytest.mark.parametrize("steps", [
    [_replace("ab", "XYZ")],  # longer than what it replaces
    [_replace("ab", "")],  # removes it
    [_replace("é", "\u2581\u2581"), _replace(" ", "\u2581")],  # multi-byte both ways
    [_prepend("\u2581"), _replace(" ", "\u2581")],  # Llama's older layout
    [_replace("x", "yz"), _prepend("\u2581x")],
])
def test_literal_programs_run_natively_with_hf_offsets(literal_built, steps):
    from wordsplit.engines.native import native_normalizer

    hf, vocab = literal_built(steps)
    assert native_normalizer(vocab.normalizer)
    native = TokenizerOptions(backend="native").build(vocab)
    assert native.native_engine() is not None
    _assert_offsets_equal(hf, vocab, [*TEXTS, "", "ab abab éé  x xx", "\u2581 \u2581ab"])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(steps=st.lists(LITERAL_STEPS, min_size=1, max_size=3), texts=st.lists(LITERAL_TEXT, min_size=1, max_size=4))
def test_literal_programs_align_as_hf_and_the_python_normalizer(literal_built, steps, texts):
    hf, vocab = literal_built(steps)
    _assert_offsets_equal(hf, vocab, texts)


SPM_LEGACY = Path(__file__).parent / "data" / "spm" / "mistral-v7-llama-legacy.tokenizer.json.gz"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=LITERAL_TEXT)
def test_a_sentencepiece_vocabulary_with_a_literal_program_encodes_as_hf(text):
    """Mistral's tokenizer.json in Llama's older layout (Prepend("▁") + Replace(" ", "▁")): the
    core runs the program; ids and offsets on both backends are HF's."""
    hf = _legacy_hf()
    vocab = load_vocab(SPM_LEGACY)
    assert isinstance(vocab.normalizer, Sequence)
    expected = hf.encode(text, add_special_tokens=False)
    for backend in BACKENDS:
        result = TokenizerOptions(backend=backend).build(vocab).encode_with_offsets(text)
        assert (result.ids, result.char_offsets) == (expected.ids, expected.offsets), backend


def _legacy_hf():
    import gzip

    if "hf" not in _LEGACY:
        _LEGACY["hf"] = HFTokenizer.from_str(gzip.decompress(SPM_LEGACY.read_bytes()).decode())
    return _LEGACY["hf"]


_LEGACY: dict = {}
