"""The hand-written native scanners equal their regexes.

Proof by enumeration: every string of length ≤ k (k = 3 here, ``WORDSPLIT_PROOF_K=4`` for
the longer local run) over one representative code point per class the patterns
distinguish is split identically by the scanner and by the regex (``RegexSpanner``, whose
Unicode 16.0 classes are themselves checked against the oracles). A second test proves the
representatives cover every class: each of the 1,114,112 code points has the signature of
some representative. Differential tests on the corpora and long random strings follow.
"""

from __future__ import annotations

import functools
import gzip
import itertools
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import DATA
from wordsplit import _unicode16 as u16
from wordsplit._native import SCANNERS, scan
from wordsplit.spanners import RegexSpanner

PROOF_K = int(os.environ.get("WORDSPLIT_PROOF_K", "3"))
ALL_PATTERNS = sorted({pattern for _, pattern in SCANNERS})

# One code point per class, plus every character a pattern names literally.
REPRESENTATIVES = (
    "A" "a" "É" "é" "ǅ" "ʰ" "ª" "中"          # Lu Ll (ASCII and not) Lt Lm Lo
    "\u0301" "\u0903" "\u20dd"              # Mn Mc Me
    "7" "٣" "Ⅻ" "½"                         # Nd (ASCII and not) Nl No
    " " "\t" "\r" "\n" "\x0b" "\x0c" "\x85" "\xa0" "\u1680" "\u2000" "\u2028" "\u2029" "\u3000"
    "\x1c" "\x00" "\u200b" "\ufeff"          # not whitespace for the oracles: controls, format
    "'" "sStTdDmMlLvVrReE" "ſ"               # contractions, both cases, and ſ (folds to s)
    "." "/" "«" "+" "€" "😀" "\ue000" "\U000e0001" "\U0010ffff" "\u0378"  # P, S, emoji, Co, Cf, Cn
)
LITERALS = set("'sStTdDmMlLvVrReEſ /\r\n")


CLASS_NAMES = ("L", "Lu", "Ll", "Lt", "Lm", "Lo", "M", "N", "WHITE_SPACE")


def class_flags() -> list[int]:
    """For every code point, a bit per class of CLASS_NAMES it belongs to (Unicode 16.0)."""
    flags = [0] * 0x110000
    for bit, name in enumerate(CLASS_NAMES):
        for lo, hi in u16.CLASSES[name]:
            for cp in range(lo, hi + 1):
                flags[cp] |= 1 << bit
    return flags


def test_representatives_cover_every_class():
    """Each code point is either named literally by a pattern (and is a representative
    itself) or has the same classes as some representative."""
    flags = class_flags()
    assert set(LITERALS) <= set(REPRESENTATIVES)
    covered = {flags[ord(c)] for c in REPRESENTATIVES if c not in LITERALS}
    missing = {}
    for cp, f in enumerate(flags):
        # Surrogates never reach a scanner: the text is valid UTF-8.
        if f not in covered and chr(cp) not in LITERALS and not 0xD800 <= cp < 0xE000:
            missing.setdefault(f, cp)
    assert not missing, {bin(f): hex(cp) for f, cp in missing.items()}


def all_strings(k: int) -> list[str]:
    return ["".join(t) for n in range(1, k + 1) for t in itertools.product(REPRESENTATIVES, repeat=n)]


@pytest.mark.parametrize("pattern", ALL_PATTERNS)
def test_scanner_equals_regex_on_every_short_string(pattern):
    texts = all_strings(PROOF_K)
    regex = RegexSpanner(pattern)
    got = scan(pattern, texts)
    bad = [(t, g, regex.split(t)) for t, g in zip(texts, got) if g != regex.split(t)]
    assert not bad, f"{len(bad)} of {len(texts)} differ, first: {bad[0]!r}"


@pytest.mark.parametrize("corpus", sorted(p.name for p in (DATA / "corpus").glob("*.txt.gz")))
@pytest.mark.parametrize("pattern", ALL_PATTERNS)
def test_scanner_equals_regex_on_corpora(pattern, corpus):
    text = gzip.decompress((DATA / "corpus" / corpus).read_bytes()).decode("utf-8")
    assert scan(pattern, [text])[0] == RegexSpanner(pattern).split(text)


@functools.cache
def reference(pattern: str) -> RegexSpanner:
    """The Python spanner of ``pattern``, made once: translating and compiling a pattern takes
    4-31 ms, against microseconds to split one of the hypothesis tests' texts."""
    return RegexSpanner(pattern)


long_texts = st.text(
    alphabet=st.one_of(st.sampled_from(REPRESENTATIVES), st.characters(codec="utf-8", exclude_categories=("Cs",))),
    min_size=20,
    max_size=400,
)


@pytest.mark.parametrize("pattern", ALL_PATTERNS)
@settings(max_examples=200, deadline=None)
@given(text=long_texts)
def test_scanner_equals_regex_on_random_strings(pattern, text):
    assert scan(pattern, [text])[0] == reference(pattern).split(text)


@pytest.mark.parametrize("pattern", ALL_PATTERNS)
def test_long_runs_split_like_the_regex(pattern):
    for text in ["a" * 100_000, " " * 100_000, "\n" * 50_000 + "x", " \n" * 30_000, "7" * 10_000, "ſ'" * 5000]:
        assert scan(pattern, [text])[0] == RegexSpanner(pattern).split(text)


# Runs of one character, as in indentation and blank lines: the scanners skip runs of a space,
# CR or LF eight bytes at a time, so runs around and across that width are drawn often.
runs = st.lists(
    st.tuples(st.sampled_from([" ", "\n", "\r", "\t", "\u3000", "\u00a0", "a", "1", ".", "'", "\r\n"]),
              st.integers(1, 20)),
    min_size=1, max_size=12,
).map(lambda parts: "".join(char * count for char, count in parts))


@pytest.mark.parametrize("pattern", ALL_PATTERNS)
@settings(max_examples=300, deadline=None)
@given(text=runs)
def test_scanner_equals_regex_on_runs(pattern, text):
    assert scan(pattern, [text])[0] == reference(pattern).split(text)


# ASCII words of 0-40 letters (across the 8-byte steps of the letter-run scan), each after a
# separator the scanners' ASCII fast paths decide on (space, punctuation, apostrophe, tab,
# digit, line break) or one they must leave to the general path (a non-ASCII letter, mark,
# number or space right after the ASCII letters), with the text ending anywhere, including
# inside a word or right after a separator.
word_texts = st.lists(
    st.tuples(
        st.sampled_from([" ", ".", ",", "(", " (", "'", " '", "\t", "7", "\n", "\r\n", "", "é", "\u0301", "中",
                         "Ⅻ", "\u00a0", " é", ".é", "ſ", "/", "\x1c", "  ", ". ", "'s"]),
        st.text(alphabet="abcxyzABCXYZ", min_size=0, max_size=40),
    ),
    min_size=1, max_size=30,
).map(lambda parts: "".join(sep + word for sep, word in parts))


@pytest.mark.parametrize("pattern", ALL_PATTERNS)
@settings(max_examples=300, deadline=None)
@given(text=word_texts)
def test_scanner_equals_regex_on_ascii_words(pattern, text):
    assert scan(pattern, [text])[0] == reference(pattern).split(text)


@pytest.mark.parametrize("pattern", ALL_PATTERNS)
def test_dense_pieces_fill_the_output_in_batches(pattern):
    """Texts of one- and two-byte pieces: more pieces than a quarter of the bytes, so the
    scanners' output buffer is refilled several times within one text."""
    for text in ["1" * 5000, ".a" * 3000, "a." * 3000, "' " * 2000, "é." * 2000, ", " * 3000 + "x"]:
        assert scan(pattern, [text])[0] == RegexSpanner(pattern).split(text)
