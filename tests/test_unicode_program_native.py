"""The core's normalizer of HF programs of Unicode forms, ``Lowercase``, ``StripAccents``,
``Strip`` and ``Replace`` (a literal, white space: ``\\s+``, CLIP's, and ``\\s``, or the regex of a run
of one character such as ``" {2,}"``) (``crates/wordsplit/src/normalizers/unicode_program.rs``:
the Rust Tokenizer and the WebAssembly module run BERT-style files such as
tests/data/wordpiece/bert-wiki with it) against the Python package's program
(``ProgramNormalizer`` and ``program_alignment``, which
tests/test_offsets_normalizers.py holds to HF): the same text and the same alignment of every
character, on hypothesis' programs and texts."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wordsplit.core import extension
from wordsplit.engines.native import native_normalizer
from wordsplit.normalizer_programs import normalizer_program
from wordsplit.normalizers import ProgramNormalizer
from wordsplit.offsets import program_alignment

native = extension()
pytestmark = pytest.mark.skipif(native is None, reason="the native core is not built")

STEPS = st.sampled_from([
    {"type": "NFC"}, {"type": "NFD"}, {"type": "NFKC"}, {"type": "NFKD"}, {"type": "Lowercase"},
    {"type": "StripAccents"}, {"type": "Strip", "strip_left": True, "strip_right": True},
    {"type": "Strip", "strip_left": False, "strip_right": True},
    {"type": "Strip", "strip_left": True, "strip_right": False},
    {"type": "Replace", "pattern": {"Regex": "\\s+"}, "content": " "},
    {"type": "Replace", "pattern": {"Regex": "\\s"}, "content": "<s>"},
    {"type": "Replace", "pattern": {"Regex": "\\s+"}, "content": ""},
    {"type": "Replace", "pattern": {"String": "aa"}, "content": "́b"},
    {"type": "Replace", "pattern": {"String": " "}, "content": "▁"},
    # Replace: literals, and the run of one character the core runs (the converters' " {2,}")
    {"type": "Replace", "pattern": {"String": "``"}, "content": '"'},
    {"type": "Replace", "pattern": {"String": "ab"}, "content": "xyz"},
    {"type": "Replace", "pattern": {"String": " "}, "content": ""},
    {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": "\u2581"},
    {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "},
    {"type": "Replace", "pattern": {"Regex": "a+"}, "content": ""},
    {"type": "Replace", "pattern": {"Regex": "é{3,}"}, "content": "E"},
])
# What the steps change: accents and marks (composed, combining, stacked, reordered), case
# (İ, ẞ, Σ, ǅ, the Cherokee and Georgian letters), compatibility forms, white space of every kind.
ALPHABET = st.sampled_from(list(
    "aAzZ éÉeE\u0301\u0308\u0323\u0327ÅÅİıßẞΣσςǅǄǆ\u1f88\u0345ﬁﬃⅫ①Ｆ㍻ｶﾞ\u0f73\U0001d165Ꭰꭰ\u10a0ᲀ"
    "中한\u1100\u1161\u11a8 \t\n\u3000\xa0\u2028\x85\u200b!?.,😀`'b"
)) | st.sampled_from(["  ", "   ", "aa", "ééé", "``", "ab"]) | st.characters(exclude_categories=("Cs",))


def _native(steps: list[dict], text: str):
    stage = json.dumps(normalizer_program(steps).to_json())
    normalized = native.native_normalize(stage, [text])[0]
    return normalized, native.native_alignment(stage, text)


@settings(max_examples=400, deadline=None)
@given(steps=st.lists(STEPS, min_size=1, max_size=4), text=st.lists(ALPHABET, max_size=30).map("".join))
def test_text_and_alignment_are_the_python_programs(steps, text):
    expected, alignment = program_alignment(ProgramNormalizer(normalizer_program(steps)), text)
    normalized, parts = _native(steps, text)
    assert normalized == expected
    if alignment is None:
        assert parts is None
    else:
        assert parts == (expected, alignment, 0)


def test_the_programs_are_native_and_mixed_ones_are_not():
    assert native_normalizer(normalizer_program([{"type": "NFD"}, {"type": "Lowercase"}, {"type": "StripAccents"}]))
    assert not native_normalizer(normalizer_program([{"type": "NFD"}, {"type": "Prepend", "prepend": "_"}]))
    clip = [{"type": "NFC"}, {"type": "Replace", "pattern": {"Regex": "\\s+"}, "content": " "}, {"type": "Lowercase"}]
    assert native_normalizer(normalizer_program(clip))
    run = {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}
    assert native_normalizer(normalizer_program([{"type": "NFKD"}, run]))
    # Other regexes are the Python program's (the core has no translation of HF's patterns).
    for other in ["\\d+", " {2}", " {2,3}", "x*", "ab+", "[ ]+", ". {2,}"]:
        step = {"type": "Replace", "pattern": {"Regex": other}, "content": " "}
        assert not native_normalizer(normalizer_program([{"type": "NFKD"}, step])), other


@settings(max_examples=200, deadline=None)
@given(text=st.lists(ALPHABET | st.sampled_from(["aa", "aaa", " \t ", "\r\n"]), max_size=30).map("".join))
def test_clips_normalizer_is_the_python_programs(text):
    clip = [{"type": "NFC"}, {"type": "Replace", "pattern": {"Regex": "\\s+"}, "content": " "}, {"type": "Lowercase"}]
    expected, alignment = program_alignment(ProgramNormalizer(normalizer_program(clip)), text)
    normalized, parts = _native(clip, text)
    assert normalized == expected
    assert parts == (None if alignment is None else (expected, alignment, 0))
