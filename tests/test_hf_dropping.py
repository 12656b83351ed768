"""Pre-tokenizers that delete or insert text, against HF ``tokenizers`` itself: ``Whitespace``,
``WhitespaceSplit``, ``Removed`` Splits and Punctuation, and ByteLevel's ``add_prefix_space``
after other steps; ids, char offsets and word ids on both backends and every encoder. Then the
spanner contract that carries them: a spanner that declares ``drops_text`` gives spans, checked
alike by both engines, and a user's spanner may do the same. The native engine runs these
programs in Rust (``crates/wordsplit/src/spanners/hf_program.rs``): a differential test over program
shapes and texts proves it equal to the Python ``HFSplitSpanner``.

The tokenizer.json files are built here from Qwen3's (tests/data/hf): a 3,000-token slice of it
(its first merges, one special and one added token) for the sweep over configurations, and the
whole of it for the generated texts.
"""

from __future__ import annotations

import copy
import functools
import json

import pytest
import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer as HFTokenizer
from tokenizers import pre_tokenizers

import hf_files
from wordsplit import TokenizerOptions, load_vocab
from wordsplit.errors import ComponentError
from wordsplit.formats.bytelevel import token_bytes
from wordsplit.engines.native import native_program_steps
from wordsplit.formats.hf import DIGIT_CLASS, WHITESPACE_PATTERN, WORD_CLASS_INNER, punctuation_class
from wordsplit.patterns import GPT2_ORIGINAL_PATTERN
from wordsplit.spanners import SPANNERS, HFSplitSpanner, register_spanner
from wordsplit.spec import BEHAVIORS, SplitProgram
from wordsplit.split_programs import PREFIX_SPACE_STEP, split_program
from wordsplit.spanners.regex import translate_pattern
from wordsplit.core import extension

BACKENDS = ("python", "native")
ENCODERS = ("buffer-sweep", "heap-merge", "backtrack")

TEXTS = [
    "Hello World 123!",
    "  multiple   spaces\n\nnew lines\t tab \r\n",
    "\t\tx\n \n y \u3000z\u00a0w\u2028v",
    "it's 'S we're I'LL they've",
    "1234567890 x 3.14159 -42 ١٢٣ ৭৮ 12½ Ⅻ",
    "日本語のテキスト 한국어 中文、句読点。",
    "e\u0301 a\u0323\u0302 cafe\u0301! \u1100\u1161\u11a8 Ελληνικά",
    "emoji 😀😀 ok 👍🏽 👨‍👩‍👧 Ⓐⓑ 🅰",
    "snake_case wo\u200drd x\u200cy ‿ ﹏",
    "punct: (a), [b]; {c}! ¿qué? «x» — y… ‹z› --a--b--",
    "ctrl \x00\x01\x1f\x7f\u200b\ufeff end",
    " leading space",
    "",
    " ",
    "   \t\n ",
    "a",
    "-",
]
# Added tokens are split out before pre-tokenizing: each stretch between them is its own text.
LITERAL_TEXTS = ["a<think>B  C<|endoftext|> d", "<think> x", "  <think>\t<|endoftext|>", "x-<think>-y"]

_BYTE_LEVEL = {"type": "ByteLevel", "trim_offsets": False}
_SPLIT_SPACE_REMOVED = {"type": "Split", "pattern": {"Regex": "\\s+"}, "behavior": "Removed", "invert": False}
_SPLIT_WORDS_KEPT = {"type": "Split", "pattern": {"Regex": "\\p{L}+|\\p{N}"}, "behavior": "Removed", "invert": True}
_SPLIT_DASH_REMOVED = {"type": "Split", "pattern": {"String": "-"}, "behavior": "Removed", "invert": False}

# Steps before ByteLevel, by name.
STEPS = {
    "whitespace": [{"type": "Whitespace"}],
    "whitespace-split": [{"type": "WhitespaceSplit"}],
    "punctuation-removed": [{"type": "Punctuation", "behavior": "Removed"}],
    "split-removed": [_SPLIT_SPACE_REMOVED],
    "split-removed-inverted": [_SPLIT_WORDS_KEPT],
    "digits-whitespace-split": [{"type": "Digits", "individual_digits": True}, {"type": "WhitespaceSplit"},
                                {"type": "Punctuation", "behavior": "Isolated"}],
    "dash-removed-then-merged": [_SPLIT_DASH_REMOVED, {"type": "Split", "pattern": {"Regex": "\\s"},
                                                       "behavior": "MergedWithNext", "invert": False}],
    "digits": [{"type": "Digits", "individual_digits": True}],  # add_prefix_space is the only insertion
}
# (steps, add_prefix_space, use_regex)
CONFIGS = [
    *((name, prefix, True) for name in STEPS for prefix in (False, True) if (name, prefix) != ("digits", False)),
    ("whitespace", True, False),
    ("whitespace-split", False, False),
    ("split-removed-inverted", True, False),
    ("digits", True, False),
]


ANCHOR_TEXTS = ["a\nb", "a\n", "\na", "ab cd", "\n\n", "a\n\nb c", "x\r\ny\n ", " \n", "é\n"]


@pytest.mark.parametrize("pattern, behavior, all_native", [
    ("$", "Removed", False), ("^", "MergedWithNext", False), ("^\\s*$", "Removed", False),
    ("\\p{L}$", "Isolated", True), ("^ ?\\p{L}", "MergedWithPrevious", True), ("\\s$", "Removed", True),
])
def test_line_anchors_are_hf_s(small_spec, tmp_path, pattern, behavior, all_native):
    """HF's Oniguruma reads `^` and `$` as line anchors: `$` before every "\\n" and at the end,
    `^` at the start and after every "\\n" that does not end the text. (A pattern that can match
    the empty string keeps its program in Python.)"""
    spec = copy.deepcopy(small_spec)
    split = {"type": "Split", "pattern": {"Regex": pattern}, "behavior": behavior, "invert": False}
    spec["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [split, {**_BYTE_LEVEL, "add_prefix_space": False}]}
    hf, vocab = hf_files.load_both(spec, tmp_path)
    _assert_same(hf, vocab, ANCHOR_TEXTS)
    assert TokenizerOptions(backend="native").build(vocab).native == all_native


def _config_id(config) -> str:
    name, prefix, use_regex = config
    return f"{name}{'-prefix' if prefix else ''}{'' if use_regex else '-noregex'}"


def _pre_tokenizer(name: str, prefix: bool, use_regex: bool) -> dict:
    byte_level = {**_BYTE_LEVEL, "add_prefix_space": prefix, "use_regex": use_regex}
    return {"type": "Sequence", "pretokenizers": [*STEPS[name], byte_level]}


@pytest.fixture(scope="module")
def qwen_spec() -> dict:
    spec = hf_files.qwen_spec()
    spec["post_processor"] = None  # offsets as the model gives them
    return spec


@pytest.fixture(scope="module")
def small_spec() -> dict:
    """Qwen3's first 3,000 tokens and the merges that make them, one special and one added token."""
    return hf_files.small_spec(added_tokens=hf_files.SMALL_ADDED_TOKENS)


def _assert_same(hf, vocab, texts, encoders=ENCODERS) -> None:
    """ids, char offsets and word ids equal HF's on both backends and the given encoders."""
    expected = {text: hf.encode(text, add_special_tokens=False) for text in texts}
    for backend in BACKENDS:
        for encoder in encoders:
            tok = TokenizerOptions(backend=backend, encoder=encoder).build(vocab)
            for text, encoding in expected.items():
                where = (backend, encoder, text)
                assert tok.encode(text, allowed_special="all") == encoding.ids, where
                result = tok.encode_with_offsets(text, allowed_special="all")
                assert result.ids == encoding.ids, where
                assert result.char_offsets == encoding.offsets, where
                assert result.word_ids == encoding.word_ids, where


def test_word_class_is_onigurumas_on_every_code_point():
    """WORD_CLASS_INNER is the \\w of HF's Whitespace regex (Oniguruma's), and \\s its \\s, for
    every code point: "a" + c is one piece for a word character, "a" alone for whitespace."""
    word = regex.compile(translate_pattern(f"[{WORD_CLASS_INNER}]"))
    space = regex.compile(translate_pattern("\\s"))
    oracle = pre_tokenizers.Whitespace()
    wrong = []
    for cp in range(0x110000):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        c = chr(cp)
        pieces = [piece for piece, _ in oracle.pre_tokenize_str("a" + c)]
        is_word, is_space = pieces == ["a" + c], pieces == ["a"]
        if is_word != bool(word.fullmatch(c)) or is_space != bool(space.fullmatch(c)):
            wrong.append(f"U+{cp:04X}")
    assert not wrong, wrong[:20]


@pytest.mark.parametrize("config", CONFIGS, ids=_config_id)
def test_dropping_pre_tokenizers_match_hf(small_spec, tmp_path, config):
    spec = copy.deepcopy(small_spec)
    spec["pre_tokenizer"] = _pre_tokenizer(*config)
    hf, vocab = hf_files.load_both(spec, tmp_path)
    spanner = HFSplitSpanner(vocab.pipeline.spanner)
    assert spanner.drops_text != (config[0] == "digits" and not config[1])
    for backend in BACKENDS:
        assert TokenizerOptions(backend=backend).build(vocab).spanner_name == "hf-split"
    # The native backend runs the program in Rust: every stage native, the GIL released.
    assert TokenizerOptions(backend="native").build(vocab).native
    _assert_same(hf, vocab, [*TEXTS, *LITERAL_TEXTS])


@pytest.mark.parametrize("normalizer, byte_level_prefix", [
    (None, True),  # ByteLevel's add_prefix_space as the first step: the normalizer's last
    ({"type": "Prepend", "prepend": "\u2581"}, False),
    ({"type": "Prepend", "prepend": "ab"}, True),
], ids=["prefix-space", "prepend", "prepend-then-prefix-space"])
def test_text_put_before_a_segment_has_hf_offsets(small_spec, tmp_path, normalizer, byte_level_prefix):
    """A normalizer that puts text before the segment aligns it to the segment's first
    character, as HF's prepend does (a token of that text alone gets that character)."""
    spec = copy.deepcopy(small_spec)
    spec["normalizer"] = normalizer
    spec["pre_tokenizer"] = {**_BYTE_LEVEL, "add_prefix_space": byte_level_prefix, "use_regex": True}
    hf, vocab = hf_files.load_both(spec, tmp_path)
    _assert_same(hf, vocab, [*TEXTS, *LITERAL_TEXTS, "\tx", "x<think>\ty"], encoders=("heap-merge",))


_ALPHABET = st.sampled_from(list("ab Z-_,.!1½\t\n\u3000\u00a0é\u0301日😀Ⓐ") + ["  ", "ab", "--", "<think>"])


@pytest.mark.parametrize("config", CONFIGS, ids=_config_id)
def test_spanner_equals_hf_pre_tokenizer_on_generated_text(small_spec, config):
    """The spanner's pieces (prefixes included) are HF's pre-tokenized pieces."""
    from wordsplit.formats.hf import read_hf_tokenizer_json

    spec = copy.deepcopy(small_spec)
    spec["pre_tokenizer"] = _pre_tokenizer(*config)
    oracle = HFTokenizer.from_str(json.dumps(spec)).pre_tokenizer
    spanner = HFSplitSpanner(read_hf_tokenizer_json(json.dumps(spec).encode()).pipeline.spanner)

    @settings(max_examples=120, deadline=None, derandomize=True)
    @given(st.lists(_ALPHABET, max_size=14).map("".join))
    def check(text):
        expected = [token_bytes(piece).decode("utf-8") for piece, _ in oracle.pre_tokenize_str(text)]
        assert spanner.split(text) == expected, text
        spans = spanner.spans(text)
        assert [s[2] + text[s[0]:s[1]] if len(s) == 3 else text[s[0]:s[1]] for s in spans] == expected

    check()


@pytest.fixture(scope="module")
def qwen_whitespace(qwen_spec, tmp_path_factory):
    """Qwen3 (NFC, every added token) with Sequence[Whitespace, ByteLevel(add_prefix_space)]."""
    spec = copy.deepcopy(qwen_spec)
    spec["pre_tokenizer"] = _pre_tokenizer("whitespace", True, True)
    return hf_files.load_both(spec, tmp_path_factory.mktemp("qwen-whitespace"))


@pytest.fixture(scope="module")
def qwen_whitespace_split(qwen_spec, tmp_path_factory):
    """Qwen3 with Sequence[WhitespaceSplit, ByteLevel]."""
    spec = copy.deepcopy(qwen_spec)
    spec["pre_tokenizer"] = _pre_tokenizer("whitespace-split", False, True)
    return hf_files.load_both(spec, tmp_path_factory.mktemp("qwen-whitespace-split"))


def test_qwen3_with_dropping_pre_tokenizers_matches_hf(qwen_whitespace, qwen_whitespace_split):
    texts = [*TEXTS, "<think>x</think>\n\n<tool_call>{\"a\": 1}</tool_call>", "a <|im_end|> b"]
    for hf, vocab in (qwen_whitespace, qwen_whitespace_split):
        _assert_same(hf, vocab, texts)


_TEXT = st.lists(st.sampled_from([*"aZ é\u0301\u1e0b\u0323日本😀👍🏽 \t\n\u3000-_.,!?1½", "<think>", "</think>"]) |
                 st.characters(codec="utf-8"), max_size=30).map("".join)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=_TEXT)
def test_qwen3_generated_text_matches_hf(qwen_whitespace, qwen_whitespace_split, text):
    for hf, vocab in (qwen_whitespace, qwen_whitespace_split):
        _assert_same(hf, vocab, [text], encoders=("heap-merge",))


# -- the spanner contract ---------------------------------------------------------------------


class _WordsWithSpace:
    """A user's spanner that drops text: each run of non-spaces, with a space before it."""

    drops_text = True

    def __init__(self, pattern):
        self.pattern = pattern

    def spans(self, text):
        return [(m.start(), m.end(), " ") for m in regex.finditer(r"\S+", text)]

    def split(self, text):
        return [" " + text[a:b] for a, b, _ in self.spans(text)]


@pytest.fixture
def words_spanner():
    register_spanner("test-words-with-space")(_WordsWithSpace)
    yield "test-words-with-space"
    SPANNERS.remove("test-words-with-space")


@pytest.mark.parametrize("backend", BACKENDS)
def test_user_spanner_may_drop_and_prefix_text(words_spanner, backend):
    vocab = load_vocab("gpt2")
    tok = TokenizerOptions(backend=backend, spanner=words_spanner).build(vocab)
    plain = TokenizerOptions(backend=backend).build(vocab)
    text = "hello\t\tworld  é😀!"
    expected = [i for word in ("hello", "world", "é😀!") for i in plain.encode(" " + word)]
    assert tok.encode(text) == expected
    result = tok.encode_with_offsets(text)
    assert result.ids == expected
    # The prefix space is aligned to its word's first character: each word's first token
    # starts there.
    assert result.char_offsets[0] == (0, 5) and result.char_offsets[1] == (7, 12)
    assert result.char_offsets[-1][1] == len(text) and result.word_ids[:2] == [0, 1]
    assert result.byte_offsets[1] == (7, 12)
    assert tok.encode("  \t ") == [] and tok.encode_with_offsets("").ids == []


@pytest.mark.parametrize("spans", [
    "not a list",
    [(0, 1, " "), (0, 1)],  # overlapping
    [(2, 1)],  # end before start
    [(0, 99)],  # past the end
    [(-1, 1)],
    [[0, 1]],  # a list, not a tuple
    [(0, 1, 2)],  # prefix not a str
    [(0, True)],  # a bool is no offset
    [(0, 1, " ", "x")],
    [(0, 1, "\ud800")],  # a prefix that is no UTF-8
])
def test_broken_spans_raise_the_same_component_error(spans, tmp_path):
    class Broken(_WordsWithSpace):
        def spans(self, text):
            return spans

    register_spanner("test-broken-spans")(Broken)
    try:
        messages = set()
        for backend in BACKENDS:
            tok = TokenizerOptions(backend=backend, spanner="test-broken-spans").build(load_vocab("gpt2"))
            for call in (tok.encode, tok.encode_with_offsets):
                with pytest.raises(ComponentError, match=r"spans\(\) must return") as excinfo:
                    call("ab cd")
                messages.add(str(excinfo.value))
        assert len(messages) == 1, messages
    finally:
        SPANNERS.remove("test-broken-spans")


def test_covering_spanners_keep_the_coverage_check():
    """A spanner that does not declare drops_text must still cover its input."""

    class Dropping:
        def __init__(self, pattern):
            self.pattern = pattern

        def split(self, text):
            return text.split()

    register_spanner("test-undeclared-drop")(Dropping)
    try:
        for backend in BACKENDS:
            tok = TokenizerOptions(backend=backend, spanner="test-undeclared-drop").build(load_vocab("gpt2"))
            with pytest.raises(ComponentError, match="concatenate to its input"):
                tok.encode("a b")
    finally:
        SPANNERS.remove("test-undeclared-drop")


# -- the native program equals the Python spanner ---------------------------------------------

# Patterns of every kind the loader writes into a program (Whitespace's, WhitespaceSplit's,
# Punctuation's, Digits', ByteLevel's, an escaped String), and user Split regexes: runs,
# alternatives, a lookahead, case-insensitive letters, a multi-character delimiter.
PROGRAM_PATTERNS = [
    WHITESPACE_PATTERN, r"\s", punctuation_class(), DIGIT_CLASS, GPT2_ORIGINAL_PATTERN, r"\x{2D}",
    r"\s+", r"\p{L}+|\p{N}", r"\s+(?!\S)|\s+", r"(?i:ab)", r"--|\.\.", r"[^\s\p{L}]+",
]
_STEP = (st.sampled_from(PROGRAM_PATTERNS).flatmap(
    lambda pattern: st.builds(lambda behavior, invert: {"pattern": pattern, "behavior": behavior, "invert": invert},
                              st.sampled_from(BEHAVIORS), st.booleans()))
         | st.just(PREFIX_SPACE_STEP))
_PROGRAM = st.lists(_STEP, max_size=4).map(split_program)
_PROGRAM_TEXT = st.lists(
    st.sampled_from([*"ab AZ-_.,!1½\t\n\r\u3000\u00a0é\u0301日😀Ⓐ'", "  ", "ab", "--", "..", "'s", " 12"])
    | st.characters(codec="utf-8"),
    max_size=24,
).map("".join)


@functools.lru_cache(maxsize=None)
def _both_spanners(program: SplitProgram):
    return HFSplitSpanner(program), native_program_steps(program)


def _native_spans(steps, texts) -> list[list[tuple]]:
    return [[(a, b, p) if p else (a, b) for a, b, p in spans]
            for spans in extension().hf_program_spans(steps, texts)]


@settings(max_examples=300, deadline=None, derandomize=True)
@given(program=_PROGRAM, texts=st.lists(_PROGRAM_TEXT, min_size=1, max_size=6))
def test_native_program_equals_python_spanner(program, texts):
    """On any program of the loader's step kinds (every behavior, invert, add_prefix_space
    anywhere) and any text, the native program's pieces are the Python spanner's."""
    spanner, steps = _both_spanners(program)
    assert steps is not None, program  # every pattern here runs natively
    assert _native_spans(steps, texts) == [spanner.spans(text) for text in texts], program


@pytest.mark.parametrize("config", CONFIGS, ids=_config_id)
def test_native_program_equals_python_on_loaded_programs(small_spec, config):
    """The programs the loader makes, on the texts above and on generated ones."""
    from wordsplit.formats.hf import read_hf_tokenizer_json

    spec = copy.deepcopy(small_spec)
    spec["pre_tokenizer"] = _pre_tokenizer(*config)
    program = read_hf_tokenizer_json(json.dumps(spec).encode()).pipeline.spanner
    spanner, steps = _both_spanners(program)
    texts = [*TEXTS, *LITERAL_TEXTS, "x" * 300 + " " * 300 + "!" * 300]
    assert _native_spans(steps, texts) == [spanner.spans(text) for text in texts]

    @settings(max_examples=100, deadline=None, derandomize=True)
    @given(st.lists(_PROGRAM_TEXT, min_size=1, max_size=8))
    def check(texts):
        assert _native_spans(steps, texts) == [spanner.spans(text) for text in texts]

    check()


def test_program_with_an_empty_match_stays_python_and_exact(small_spec, tmp_path):
    """A pattern that can match the empty string keeps the program in Python on the native
    backend (engines differ on where a search resumes after an empty match): still HF's ids."""
    spec = copy.deepcopy(small_spec)
    spec["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": "x*"}, "behavior": "Removed", "invert": False},
        {**_BYTE_LEVEL, "add_prefix_space": True}]}
    hf, vocab = hf_files.load_both(spec, tmp_path)
    assert native_program_steps(vocab.pipeline.spanner) is None
    assert not TokenizerOptions(backend="native").build(vocab).native
    _assert_same(hf, vocab, ["axxb x", "xx", "ab  cx d"], encoders=("heap-merge",))


def test_native_program_batches_on_threads_as_one_by_one(qwen_whitespace):
    """The native program runs on native threads (no GIL): a batch equals each text alone."""
    hf, vocab = qwen_whitespace
    tok = TokenizerOptions(backend="native").build(vocab)
    assert tok.native
    texts = [f"{text} {i}" for i, text in enumerate(TEXTS * 20)]
    assert tok.encode_batch(texts, num_threads=2) == [hf.encode(t, add_special_tokens=False).ids for t in texts]
