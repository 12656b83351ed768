"""HF ``Split`` pre-tokenizers in tokenizer.json: every behavior and ``invert``, against HF
``tokenizers`` itself, on both backends.

The tokenizer.json files are built here: Qwen3's tokenizer.json (tests/data/hf) with its
pre-tokenizer replaced, and, for the sweep over configurations, a 3,000-token slice of it
(its first merges), which HF and wordsplit both load in milliseconds.
"""

from __future__ import annotations

import json

import pytest
import regex
from tokenizers import Regex as HFRegex
from tokenizers import pre_tokenizers

import hf_files
from wordsplit import TokenizerOptions, load_vocab
from wordsplit.errors import UnsupportedTokenizerError, VocabFormatError
from wordsplit.spanners.hf_split import HFSplitSpanner, hf_split
from wordsplit.split_programs import split_program
from wordsplit.spanners.regex import translate_pattern
from wordsplit.spec import RegexSplit, SplitProgram

BACKENDS = ("python", "native")

TEXTS = [
    "hello world 123!",
    "the-final--countdown-",
    "  multiple   spaces\n\nnew lines\t tab ",
    "CAPS and lower 42 x 7 ab aab abab",
    "日本語のテキスト and ünïcödé Ελληνικά",
    "emoji 😀😀 ok 👍🏽",
    "xxaxxbx yy",
    "it's 'S we're I'LL",
    "",
    " ",
    "a",
    "1234567890",
]

# (JSON pattern, python-side description) pairs: regexes of every shape a Split uses.
PATTERNS = [
    {"Regex": "[a-z]+"},  # does not cover the text: the gaps stay
    {"Regex": "\\s+"},
    {"Regex": "\\p{N}"},
    {"Regex": "(\\p{L})+"},  # a capturing group: the whole match is the split
    {"Regex": "(?<word>[a-z])(?:[a-z]*)"},  # a named group
    {"Regex": "x*"},  # empty matches
    {"Regex": "(?=a)"},  # only empty matches
    {"Regex": " ?[^\\s\\p{L}\\p{N}]+"},
    {"String": " "},
    {"String": "-"},
    {"String": "ab"},
]
BEHAVIORS = ["Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous"]


@pytest.fixture(scope="module")
def qwen_spec() -> dict:
    return hf_files.qwen_spec()


@pytest.fixture(scope="module")
def small_spec() -> dict:
    """Qwen3's first 3,000 tokens and the merges that make them; no added tokens, no normalizer."""
    return hf_files.small_spec()


def _split(pattern: dict, behavior: str, invert: bool = False) -> dict:
    return {"type": "Split", "pattern": pattern, "behavior": behavior, "invert": invert}


def _with_pre_tokenizer(spec: dict, splits: list[dict], *, use_regex: bool = False) -> dict:
    spec = dict(spec)
    spec["pre_tokenizer"] = {
        "type": "Sequence",
        "pretokenizers": [*splits, {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False,
                                    "use_regex": use_regex}],
    }
    return spec


def _assert_same(hf, vocab, texts=TEXTS) -> None:
    for backend in BACKENDS:
        tok = TokenizerOptions(backend=backend).build(vocab)
        for text in texts:
            assert tok.encode(text) == hf.encode(text, add_special_tokens=False).ids, (backend, text)


def test_uncovered_text_is_kept_as_hf_does(qwen_spec, tmp_path):
    """The text a Split pattern does not match is encoded, not dropped."""
    spec = _with_pre_tokenizer(qwen_spec, [_split({"Regex": "[a-z]+"}, "Isolated")])
    hf, vocab = hf_files.load_both(spec, tmp_path)
    assert hf.encode("hello world 123!", add_special_tokens=False).ids == [14990, 220, 14615, 220, 16, 17, 18, 0]
    for backend in BACKENDS:
        tok = TokenizerOptions(backend=backend).build(vocab)
        assert tok.spanner_name == "hf-split"
        assert tok.encode("hello world 123!") == [14990, 220, 14615, 220, 16, 17, 18, 0]
    _assert_same(hf, vocab)


def test_capturing_group_pattern_encodes(qwen_spec, tmp_path):
    """A pattern with a capturing group splits by its whole match, whatever its groups capture."""
    spec = _with_pre_tokenizer(qwen_spec, [_split({"Regex": "(\\p{L}+)|(\\p{N})| ?[^\\s\\p{L}\\p{N}]+|\\s+"},
                                                  "Isolated")])
    hf, vocab = hf_files.load_both(spec, tmp_path)
    _assert_same(hf, vocab)


@pytest.mark.parametrize("invert", [False, True])
@pytest.mark.parametrize("behavior", BEHAVIORS)
def test_split_behaviors_match_hf(small_spec, tmp_path, behavior, invert):
    for i, pattern in enumerate(PATTERNS):
        spec = _with_pre_tokenizer(small_spec, [_split(pattern, behavior, invert)])
        hf, vocab = hf_files.load_both(spec, tmp_path / str(i))
        assert isinstance(vocab.pipeline.spanner, SplitProgram) and vocab.pattern is None
        _assert_same(hf, vocab)


@pytest.mark.parametrize("use_regex", [False, True])
def test_split_sequences_match_hf(small_spec, tmp_path, use_regex):
    """Each step splits every piece of the one before; ByteLevel's regex is one more step."""
    sequences = [
        [_split({"Regex": "\\s+"}, "MergedWithNext"), _split({"Regex": "\\p{N}"}, "Isolated")],
        [_split({"String": "-"}, "Contiguous", True), _split({"Regex": "[a-z]+"}, "MergedWithPrevious")],
        [_split({"Regex": "x*"}, "MergedWithNext", True), _split({"Regex": "(?=a)"}, "Isolated"),
         _split({"Regex": "\\p{L}+"}, "Contiguous")],
    ]
    for i, splits in enumerate(sequences):
        hf, vocab = hf_files.load_both(_with_pre_tokenizer(small_spec, splits, use_regex=use_regex), tmp_path / str(i))
        _assert_same(hf, vocab)


def test_byte_level_without_regex_is_one_piece(small_spec, tmp_path):
    spec = dict(small_spec)
    spec["pre_tokenizer"] = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False,
                             "use_regex": False}
    hf, vocab = hf_files.load_both(spec, tmp_path)
    assert vocab.pipeline.spanner == SplitProgram(())
    assert HFSplitSpanner(vocab.pipeline.spanner).split("a b") == ["a b"]
    _assert_same(hf, vocab)


def test_covering_isolated_pattern_stays_plain(qwen_spec, tmp_path):
    """Qwen3's own Split keeps its plain pattern, so the native scanner runs."""
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(qwen_spec))
    vocab = load_vocab(path, cache_dir=tmp_path / "cache")
    assert isinstance(vocab.pipeline.spanner, RegexSplit)
    assert vocab.content_hash == load_vocab("qwen3").content_hash


_PY_BEHAVIOR = {"Isolated": "isolated", "Removed": "removed", "MergedWithPrevious": "merged_with_previous",
                "MergedWithNext": "merged_with_next", "Contiguous": "contiguous"}


@pytest.mark.parametrize("behavior", [*BEHAVIORS, "Removed"])
@pytest.mark.parametrize("invert", [False, True])
def test_hf_split_function_matches_hf_pre_tokenizer(behavior, invert):
    """hf_split (every behavior, Removed too) equals HF's Split.pre_tokenize_str, empty pieces dropped."""
    texts = [*TEXTS, "the-final--countdown--", "--a-b--", "aaa", "ab-"]
    for pattern in PATTERNS:
        if "Regex" in pattern:
            hf_pattern, ours = HFRegex(pattern["Regex"]), pattern["Regex"]
        else:
            hf_pattern = pattern["String"]
            ours = "".join(f"\\x{{{ord(c):X}}}" for c in pattern["String"])
        compiled = regex.compile(translate_pattern(ours))
        oracle = pre_tokenizers.Split(hf_pattern, _PY_BEHAVIOR[behavior], invert=invert)
        for text in texts:
            expected = [piece for piece, _ in oracle.pre_tokenize_str(text)]
            got = [text[s:e] for s, e in hf_split(compiled, text, behavior, invert) if s < e]
            assert got == expected, (pattern, behavior, invert, text)


@pytest.mark.parametrize("invert", [False, True])
def test_removed_split_matches_hf(small_spec, tmp_path, invert):
    """Removed deletes text: the program drops text, and both engines encode its spans
    (tests/test_hf_dropping.py has offsets and the other dropping pre-tokenizers)."""
    for i, pattern in enumerate(PATTERNS):
        spec = _with_pre_tokenizer(small_spec, [_split(pattern, "Removed", invert)], use_regex=True)
        hf, vocab = hf_files.load_both(spec, tmp_path / str(i))
        assert HFSplitSpanner(vocab.pipeline.spanner).drops_text
        _assert_same(hf, vocab)


@pytest.mark.parametrize("split, error", [
    ({"type": "Split", "pattern": {"Regex": "a"}, "behavior": "Sideways", "invert": False}, VocabFormatError),
    ({"type": "Split", "pattern": {"Glob": "a"}, "behavior": "Isolated", "invert": False}, VocabFormatError),
    ({"type": "Split", "pattern": {"Regex": "a"}, "behavior": "Isolated", "invert": "yes"}, VocabFormatError),
    ({"type": "Split", "pattern": {"Regex": "(" * 5000 + "a" + ")" * 5000}, "behavior": "Isolated", "invert": False},
     UnsupportedTokenizerError),
    ({"type": "Split", "pattern": {"Regex": "a**"}, "behavior": "Isolated", "invert": False}, VocabFormatError),
    ({"type": "Split", "pattern": {"Regex": "\\w+"}, "behavior": "Isolated", "invert": False},
     UnsupportedTokenizerError),
])
def test_malformed_splits_are_typed_errors_naming_the_file(small_spec, tmp_path, split, error):
    spec = _with_pre_tokenizer(small_spec, [split])
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(spec))
    with pytest.raises(error, match=r"tokenizer\.json"):
        load_vocab(path, cache_dir=tmp_path)


def test_regex_spanner_refuses_a_split_program():
    from wordsplit.spanners.regex import RegexSpanner

    with pytest.raises(UnsupportedTokenizerError, match="hf-split"):
        RegexSpanner(split_program([]))


@pytest.mark.parametrize("behavior", [*BEHAVIORS, "Removed"])
def test_spanner_equals_hf_on_generated_text(behavior):
    """The spanner (its fast Isolated path included) against HF's Split on random texts drawn
    from characters every pattern above distinguishes."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    alphabet = st.sampled_from(list("aabx- \n\t1'SZé日😀") + ["ab", "xx", "  "])
    steps = []
    for pattern in PATTERNS:
        if "Regex" in pattern:
            hf_pattern, ours = HFRegex(pattern["Regex"]), pattern["Regex"]
        else:
            hf_pattern = pattern["String"]
            ours = "".join(f"\\x{{{ord(c):X}}}" for c in pattern["String"])
        for invert in (False, True):
            spanner = HFSplitSpanner(split_program([{"pattern": ours, "behavior": behavior, "invert": invert}]))
            steps.append((spanner, pre_tokenizers.Split(hf_pattern, _PY_BEHAVIOR[behavior], invert=invert)))

    @settings(max_examples=150, deadline=None, derandomize=True)
    @given(st.lists(alphabet, max_size=12).map("".join))
    def check(text):
        for spanner, oracle in steps:
            assert spanner.split(text) == [piece for piece, _ in oracle.pre_tokenize_str(text)], (spanner, text)

    check()
