"""The native regex spanner equals the Python ``RegexSpanner``; the native regex sequence
equals its Python reference (below); both run in the native Pipeline.

Proof by enumeration, as for the scanners (tests/test_scanners.py, whose representatives
are proven there to cover every class): every string of length <= k over one code point per
class is split identically by the native spanner and by ``RegexSpanner``, for the bundled
patterns, Llama 3's, and patterns built to take each path of the native planner (lazy DFA,
``S+(?!C)`` by hand, possessives that matter, lookbehind on fancy-regex, text the pattern
does not cover). Then hypothesis on random text, the corpora through whole vocabularies
against the goldens and the live oracles, and the fallback to the Python spanner.
"""

from __future__ import annotations

import functools
import gzip
import os
import time

import pytest
import regex as regex_module
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import ALL_VOCABS, DATA, encode_case, golden
from test_scanners import REPRESENTATIVES, all_strings
from wordsplit import TokenizerOptions, Vocab, load_vocab
from wordsplit._native import SCANNERS, Pipeline, regex_plan, regex_split
from wordsplit.engines.native import native_regex_pattern
from wordsplit.errors import ComponentError, UnsupportedTokenizerError
from wordsplit.spanners import RegexSpanner
from wordsplit.spanners.regex import native_pattern, translate_pattern

PROOF_K = int(os.environ.get("WORDSPLIT_PROOF_K", "3"))

# Meta's Llama 3 pattern (tokenizer.model / tokenizer.json of Llama 3.x).
LLAMA3_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)

# llama.cpp's adaptation of it (llama-vocab.cpp, LLAMA_VOCAB_PRE_TYPE_LLAMA3).
LLAMA3_GGUF_PATTERN = (
    r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
# llama.cpp's regexes for LLAMA_VOCAB_PRE_TYPE_DEEPSEEK_LLM (llama-vocab.cpp), in order. The
# characters that NFC would change (U+1F7D, U+1FBE, U+1FD3, U+1FDB, U+2126, U+212A) are escaped,
# so no editor or copy can normalize the ranges.
DEEPSEEK_LLM_REGEXES = [
    "[\r\n]",
    "\\s?[A-Za-zµÀ-ÖØ-öø-ƺƼ-ƿǄ-ʓʕ-ʯͰ-ͳͶͷͻ-ͽͿΆΈ-ΊΌΎ-ΡΣ-ϵϷ-ҁҊ-ԯԱ-ՖႠ-ჅᎠ-Ᏽᏸ-ᏽᲐ-ᲺᲽ-Ჿᴀ-ᴫᵫ-ᵷᵹ-ᶚḀ-ἕἘ-Ἕἠ-ὅὈ-Ὅὐ-"
    "ὗὙὛὝὟ-\u1f7dᾀ-ᾴᾶ-ᾼ\u1fbeῂ-ῄῆ-ῌῐ-\u1fd3ῖ-\u1fdbῠ-Ῥῲ-ῴῶ-ῼℂℇℊ-ℓℕℙ-ℝℤ\u2126ℨ\u212a-ℭℯ-ℴℹℼ-ℿⅅ-ⅉⅎↃↄⰀ-ⱻⱾ-ⳤⳫ-ⳮⳲⳳꙀ-ꙭꚀ-ꚛꜢ-ꝯꝱ-ꞇꞋ-ꞎꭰ-ꮿﬀ-ﬆﬓ-"
    "ﬗＡ-Ｚａ-ｚ\U00010400-\U0001044f𐒰-𐓓𐓘-𐓻𐲀-𐲲𐳀-𐳲𑢠-𑣟𞤀-𞥃]+",
    "\\s?[!-/:-~！-／：-～‘-‟　-。]+",
    "\\s+$",
    "[一-龥ࠀ-一가-퟿]+",
    "\\p{N}+",
]

# name -> (pattern, the plan the native spanner must pick)
PATTERNS = {
    **{f"{name}:{i}": (pattern, "dfa") for i, (name, pattern) in enumerate(SCANNERS)},
    "llama3": (LLAMA3_PATTERN, "dfa"),
    # llama.cpp's spelling of it (a Llama 3 GGUF file): no scanner claims it.
    "llama3-gguf": (LLAMA3_GGUF_PATTERN, "dfa"),
    # GPT-2 with one digit per piece (starcoder-like): no scanner claims it.
    "gpt2-one-digit": (r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+", "dfa"),
    # A lookahead class that is not the complement of the run: a digit after spaces keeps them all.
    "run-not-letter": (r"\s+(?!\p{L})|\p{L}+|\p{N}|\s|[^\s\p{L}\p{N}]+", "dfa"),
    # Atomic groups that end their alternative, and $ inside the alternation.
    "atomic-tail": (r"(?>\p{L}+|\p{N})|(?i:'S)|\s++$|\s|[^\s\p{L}\p{N}]", "dfa"),
    # A possessive whose continuation can start with its class: it changes the match.
    "possessive-matters": (r"[^\r\n\p{N}]?+\p{L}+|\p{L}|\p{N}+|\s|[^\s\p{L}\p{N}]", "backtracking"),
    # Positive lookahead and lookbehind run on fancy-regex.
    "lookaround": (r"(?<=\p{N})\p{L}+|\p{L}|\p{N}+|\s+(?=\S)|\s+|[^\s\p{L}\p{N}]+", "backtracking"),
    # \A makes the DFA's start depend on the text before: walked by the lazy DFA, not a table.
    "start-anchor": (r"\A\s+|\p{L}+|\p{N}|\s|[^\s\p{L}\p{N}]", "dfa"),
    # Letters and spaces only: other text is not covered (both engines raise on it).
    "gaps": (r"\p{L}+|\s", "dfa"),
}


@functools.lru_cache(maxsize=None)
def python_spanner(pattern: str) -> RegexSpanner:
    return RegexSpanner(pattern)


@functools.lru_cache(maxsize=None)
def expanded(pattern: str) -> str:
    return native_pattern(pattern)


@functools.lru_cache(maxsize=None)
def compiled(pattern: str):
    return regex_module.compile(translate_pattern(pattern))


def python_pieces(spanner: RegexSpanner, text: str):
    """The Python spanner's pieces, or None where they do not cover the text."""
    pieces = spanner.split(text)
    return pieces if "".join(pieces) == text else None


@pytest.mark.parametrize("name", PATTERNS)
def test_plan(name):
    pattern, plan = PATTERNS[name]
    assert regex_plan(native_pattern(pattern)) == plan


@pytest.mark.parametrize("name", PATTERNS)
def test_native_regex_equals_python_on_every_short_string(name):
    pattern = PATTERNS[name][0]
    texts = all_strings(PROOF_K)
    spanner = RegexSpanner(pattern)
    got = regex_split([native_pattern(pattern)], texts)
    bad = [(t, g, want) for t, g in zip(texts, got) if g != (want := python_pieces(spanner, t))]
    assert not bad, f"{len(bad)} of {len(texts)} differ, first: {bad[0]!r}"


RUN_TEXT = st.lists(
    st.sampled_from(["  ", " ", "\n", "\r\n", "\t", "a", "Ab", "1", "123", "'s", "'S", "!", "é", "中", "\u0301"]),
    max_size=30,
).map("".join)
ANY_TEXT = st.one_of(
    RUN_TEXT,
    st.text(alphabet=st.one_of(st.sampled_from(REPRESENTATIVES), st.characters(exclude_categories=("Cs",))),
            max_size=80),
)


# Texts a hypothesis example: `regex_split` compiles its pattern at each call (75 ms for
# o200k's expanded classes, against microseconds to split a short text), so the random-text
# tests check ten texts a call, in a tenth of the examples: as many texts as one a call.
TEXTS_A_CALL = 10


@pytest.mark.parametrize("name", PATTERNS)
@settings(max_examples=150 // TEXTS_A_CALL, deadline=None)
@given(texts=st.lists(ANY_TEXT, min_size=TEXTS_A_CALL, max_size=TEXTS_A_CALL))
def test_native_regex_equals_python_on_random_text(name, texts):
    pattern = PATTERNS[name][0]
    spanner = python_spanner(pattern)
    assert regex_split([expanded(pattern)], texts) == [python_pieces(spanner, text) for text in texts]


@pytest.mark.parametrize("name", [n for n in PATTERNS if n != "gaps"])
def test_native_regex_equals_python_on_corpora_and_long_runs(name):
    pattern = PATTERNS[name][0]
    spanner = RegexSpanner(pattern)
    texts = [gzip.decompress(p.read_bytes()).decode("utf-8")[:200_000]
             for p in sorted((DATA / "corpus").glob("*.txt.gz"))]
    texts += [" " * 5000 + "x", "\n" * 3000, "a" * 10_000, " \n" * 2000 + "  1", "1" * 7001]
    for text, got in zip(texts, regex_split([native_pattern(pattern)], texts)):
        assert got == python_pieces(spanner, text), text[:40]


# -- the tokenizer: spanner="regex" on the native backend ----------------------------------


def regex_tokenizer(vocab: Vocab, backend: str = "native"):
    return TokenizerOptions(spanner="regex", backend=backend).build(vocab)


@pytest.mark.parametrize("name", ALL_VOCABS)
def test_bundled_vocabs_run_the_native_regex_spanner_and_match_the_goldens(name):
    tok = regex_tokenizer(load_vocab(name))
    assert tok.spanner_name == "regex" and tok.native  # all-native: the GIL is released
    bad = [(c.text, c.ids) for c in golden(name) if encode_case(tok, c) != c.ids]
    assert not bad, f"{len(bad)} mismatches, first: {bad[0]!r}"


@pytest.mark.parametrize("name", ALL_VOCABS)
def test_bundled_vocabs_on_the_corpora_match_the_oracles(name, tiktoken_oracle, hf_qwen3):
    tok = regex_tokenizer(load_vocab(name))
    for path in sorted((DATA / "corpus").glob("*.txt.gz")):
        text = gzip.decompress(path.read_bytes()).decode("utf-8")
        chunks = [text[i:i + 20_000] for i in range(0, len(text), 20_000)]
        if name == "qwen3":
            want = [e.ids for e in hf_qwen3.encode_batch(chunks, add_special_tokens=False)]
        else:
            want = tiktoken_oracle("gpt2" if name == "gpt2" else name).encode_batch(chunks, allowed_special="all")
        assert tok.encode_batch(chunks, allowed_special="all") == want, path.name


def test_llama3_pattern_on_cl100k_ranks_matches_tiktoken(tiktoken_oracle):
    import tiktoken

    cl100k = load_vocab("cl100k_base")
    vocab = Vocab(name="cl100k-llama3", ranks=cl100k.ranks, pattern=LLAMA3_PATTERN)
    oracle = tiktoken.Encoding("cl100k-llama3", pat_str=LLAMA3_PATTERN, mergeable_ranks=dict(cl100k.ranks),
                               special_tokens={})
    tok = regex_tokenizer(vocab)
    assert tok.native
    text = gzip.decompress((DATA / "corpus" / "multilingual.txt.gz").read_bytes()).decode("utf-8")
    assert tok.encode(text) == oracle.encode_ordinary(text)


# -- fallback to the Python spanner ----------------------------------------------------------


def tiny_vocab(pattern: str) -> Vocab:
    return Vocab(name="tiny", ranks={bytes([b]): b for b in range(256)}, pattern=pattern)


def test_a_pattern_the_core_cannot_run_falls_back_to_the_python_spanner():
    # Can match the empty string: the engines differ on where a search resumes after one.
    pattern = r"\p{L}*|\p{N}|\s|[^\s\p{L}\p{N}]"
    assert native_regex_pattern(pattern) is None
    with pytest.raises(UnsupportedTokenizerError, match="empty string"):
        regex_plan(native_pattern(pattern))
    native, python = regex_tokenizer(tiny_vocab(pattern)), regex_tokenizer(tiny_vocab(pattern), "python")
    assert native.backend == "native" and not native.native
    for text in ["ab 12!", "", "é\u0301x", "  \n"]:
        assert native.encode(text) == python.encode(text) == list(text.encode())


def test_an_unsupported_construct_raises_the_python_spanners_error_on_both_backends():
    for backend in ("native", "python"):
        with pytest.raises(UnsupportedTokenizerError, match=r"\\w"):
            regex_tokenizer(tiny_vocab(r"\w+|\s"), backend)


def test_unexpanded_classes_are_refused_by_the_core():
    with pytest.raises(UnsupportedTokenizerError, match="class escape"):
        regex_plan(r"\p{L}+|\s")


def test_a_gap_raises_the_same_component_error_on_both_backends():
    messages = []
    for backend in ("native", "python"):
        tok = regex_tokenizer(tiny_vocab(r"\p{L}+|\s"), backend)
        assert tok.encode("ab cd") == list(b"ab cd")
        with pytest.raises(ComponentError) as info:
            tok.encode("ab 1")
        messages.append(str(info.value))
    assert messages[0] == messages[1]
    assert regex_split([native_pattern(r"\p{L}+|\s")], ["ab 1"]) == [None]


# -- sequences of regexes (llama.cpp) ----------------------------------------------------------


def reference_sequence(patterns: list[str], text: str) -> list[str]:
    """llama.cpp's pre-tokenizer semantics: each regex cuts every piece of the previous one
    into its matches and the text between them (each piece alone is the haystack)."""
    pieces = [text] if text else []
    for pattern in patterns:
        out = []
        for piece in pieces:
            pos = 0
            for m in compiled(pattern).finditer(piece):
                if m.start() > pos:
                    out.append(piece[pos:m.start()])
                if m.end() > m.start():
                    out.append(m.group())
                pos = max(pos, m.end())
            if pos < len(piece):
                out.append(piece[pos:])
        pieces = out
    return pieces


SEQUENCES = {
    # llama.cpp's own, with its hand-written letter and punctuation classes.
    "deepseek-llm": DEEPSEEK_LLM_REGEXES,
    # deepseek-llm's regexes with \p{L} for its letter class.
    "deepseek-llm-like": [
        r"[\r\n]",
        r"\s?\p{L}+",
        r"\s?[!-/:-~！-／：-～‘-‟　-。]+",
        r"\s+$",
        r"[一-龥ࠀ-一가-퟿]+",
        r"\p{N}+",
    ],
    # deepseek-coder-like, with a lookahead regex (fancy-regex) in the middle.
    "with-lookahead": [r"[\r\n]", r"\s+(?!\S)|\s+", r"\s?\p{L}+", r"\p{N}"],
    "gpt2-then-digits": [PATTERNS["gpt2-one-digit"][0], r"\p{N}{1,2}"],
    "possessive-matters": [PATTERNS["possessive-matters"][0], r"\p{L}"],
}


@pytest.mark.parametrize("name", SEQUENCES)
def test_sequence_equals_reference_on_every_short_string(name):
    patterns = SEQUENCES[name]
    texts = all_strings(PROOF_K)
    got = regex_split([native_pattern(p) for p in patterns], texts, sequence=True)
    bad = [(t, g, want) for t, g in zip(texts, got) if g != (want := reference_sequence(patterns, t))]
    assert not bad, f"{len(bad)} of {len(texts)} differ, first: {bad[0]!r}"


def boundary_characters(patterns: list[str]) -> str:
    """The characters at both ends of each ``X-Y`` range written in the patterns, and one step
    outside: where a hand-spelled class (deepseek-llm's) could be read wrong."""
    out = set()
    for pattern in patterns:
        for m in regex_module.finditer(r"(?s)(.)-(.)", pattern):
            lo, hi = ord(m.group(1)), ord(m.group(2))
            out.update(chr(cp) for cp in (lo - 1, lo, hi, hi + 1) if 0 <= cp <= 0x10FFFF and not 0xD800 <= cp <= 0xDFFF)
    return "".join(sorted(out))


SEQUENCE_TEXT = st.one_of(
    ANY_TEXT,
    st.text(alphabet=st.sampled_from(boundary_characters(DEEPSEEK_LLM_REGEXES) + " \t\n\r\u3000a1٣中"), max_size=60),
)


@pytest.mark.parametrize("name", SEQUENCES)
@settings(max_examples=300 // TEXTS_A_CALL, deadline=None)
@given(texts=st.lists(SEQUENCE_TEXT, min_size=TEXTS_A_CALL, max_size=TEXTS_A_CALL))
def test_sequence_equals_reference_on_random_text(name, texts):
    patterns = SEQUENCES[name]
    got = regex_split([expanded(p) for p in patterns], texts, sequence=True)
    assert got == [reference_sequence(patterns, text) for text in texts]


@pytest.mark.parametrize("name", SEQUENCES)
def test_sequence_equals_reference_on_corpora(name):
    patterns = SEQUENCES[name]
    texts = [gzip.decompress(p.read_bytes()).decode("utf-8")[:100_000]
             for p in sorted((DATA / "corpus").glob("*.txt.gz"))]
    texts += [" " * 3000 + "x  \n\n  ", "1" * 5000 + "a", "\u3000" * 100 + "中" * 100]
    got = regex_split([expanded(p) for p in patterns], texts, sequence=True)
    for text, pieces in zip(texts, got):
        assert pieces == reference_sequence(patterns, text), text[:40]


@pytest.mark.parametrize("n", [1, 1000, 200_000])
def test_sequence_search_stays_linear_where_trying_each_position_is_not(n):
    # `\s+$` tried at each space of the run reads to its end: n^2 / 2 bytes. The native
    # search hands such a piece to the unanchored engine once the tries have read 4n bytes.
    patterns = [r"\s+$", r"\p{L}+"]
    cases = {
        " " * n + "¤": [" " * n + "¤"],
        " " * n + "¤" + "  ": [" " * n + "¤", "  "],
        "ab" + " " * n + "¤ c": ["ab", " " * n + "¤ ", "c"],
    }
    start = time.process_time()
    got = regex_split([expanded(p) for p in patterns], list(cases), sequence=True)
    elapsed = time.process_time() - start
    assert got == list(cases.values())
    assert elapsed < 5, f"{elapsed:.1f} s: the search is not linear"


class ReferenceSequence:
    """The reference as a Python spanner stage."""

    def __init__(self, patterns):
        self.patterns = patterns

    def split(self, text):
        return reference_sequence(self.patterns, text)


@pytest.mark.parametrize("name", SEQUENCES)
def test_sequence_runs_natively_in_the_pipeline(name):
    vocab = load_vocab("cl100k_base")
    patterns = SEQUENCES[name]

    def pipeline(**spanner):
        return Pipeline(vocab.native_tables(), spec=vocab.pipeline.dumps(), encoder="auto", pattern="", literals=[],
                        **spanner)

    native = pipeline(spanner="deepseek-llm", patterns=[native_pattern(p) for p in patterns])
    python = pipeline(spanner="deepseek-llm", spanner_impl=ReferenceSequence(patterns))
    assert native.native and not python.native
    policy_n, policy_p = native.policy(None, []), python.policy(None, [])
    text = gzip.decompress((DATA / "corpus" / "multilingual.txt.gz").read_bytes()).decode("utf-8")[:100_000]
    texts = [text, "", "a\n\n  b  12345 中文", " \r\n x"]
    for t in texts:
        assert native.encode(t, policy_n) == python.encode(t, policy_p)
    assert native.encode_batch(texts, policy_n, 2) == [python.encode(t, policy_p) for t in texts]


def test_sequence_refuses_a_pattern_that_matches_empty():
    with pytest.raises(UnsupportedTokenizerError, match="pattern 1: .*empty"):
        regex_split([native_pattern(r"\s"), native_pattern(r"\p{L}*")], ["ab"], sequence=True)
