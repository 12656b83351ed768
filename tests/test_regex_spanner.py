"""RegexSpanner splits exactly as the official tokenizers do, with Unicode 16.0 classes.

Oracles:
* HF tokenizers: ``pre_tokenizers.Split(Regex(p), behavior="isolated")`` (Oniguruma, Unicode
  16.0). Oniguruma reads tiktoken's possessive interval ``{1,3}+`` as ``({1,3})+``, so the
  oracle gets the atomic group ``(?>...{1,3})`` instead, which is what tiktoken means.
* tiktoken 0.14 (fancy-regex over Rust regex, Unicode 16.0), through a probe vocabulary that
  holds the 256 bytes plus every piece RegexSpanner produced: tiktoken looks a whole piece up
  before running BPE, so its ids spell out its own split, piece by piece. Any other split
  shows up as byte tokens.

Texts: one string holding every code point on which the ``regex`` module, Python's
``unicodedata`` and the Unicode 16.0 tables disagree about L, Lu, Ll, Lt, Lm, Lo, M, N or
White_Space; hypothesis-generated text from many scripts, categories, whitespace runs,
digits and contractions (with ſ U+017F and the Kelvin sign U+212A).
"""

from __future__ import annotations

import functools
import subprocess
import sys
import unicodedata
from pathlib import Path
from unittest import mock

import pytest
import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wordsplit._unicode16 import CLASSES, UNICODE_VERSION, WHITE_SPACE
from wordsplit.errors import UnsupportedTokenizerError, VocabFormatError
from wordsplit.spanners.regex import RegexSpanner, translate_pattern

tokenizers = pytest.importorskip("tokenizers")
tiktoken = pytest.importorskip("tiktoken")

ROOT = Path(__file__).resolve().parent.parent

# -- the patterns ----------------------------------------------------------------------------

R50K = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
GPT2_ORIGINAL = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
CL100K = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++"""
    r"""[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
CL100K_ORIGINAL = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+"""
    r"""[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
)
QWEN3 = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
    r"""|\s*[\r\n]+|\s+(?!\S)|\s+"""
)
QWEN2_LLAMA_CPP = (
    r"""(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+"""
    r"""|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
)
O200K = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"""
        r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*"""
        r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)

# name -> (pattern, whether tiktoken is its official oracle)
PATTERNS = {
    "r50k-tiktoken": (R50K, True),
    "gpt2-original": (GPT2_ORIGINAL, False),
    "cl100k-tiktoken": (CL100K, True),
    "cl100k-original": (CL100K_ORIGINAL, False),
    "qwen3": (QWEN3, False),
    "qwen2-llama.cpp": (QWEN2_LLAMA_CPP, False),
    "o200k-tiktoken": (O200K, True),
}
NAMES = list(PATTERNS)


def test_patterns_are_tiktokens():
    """The tiktoken patterns above are the exact strings of ``tiktoken_ext.openai_public``."""
    openai_public = pytest.importorskip("tiktoken_ext.openai_public")
    no_files = mock.patch.multiple(
        openai_public,
        load_tiktoken_bpe=lambda *a, **k: {},
        data_gym_to_mergeable_bpe_ranks=lambda *a, **k: {},
    )
    with no_files:
        pat = {n: f()["pat_str"] for n, f in openai_public.ENCODING_CONSTRUCTORS.items()}
    assert pat["gpt2"] == pat["r50k_base"] == pat["p50k_base"] == R50K
    assert pat["cl100k_base"] == CL100K
    assert pat["o200k_base"] == O200K


# -- oracles ---------------------------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def spanner(name: str) -> RegexSpanner:
    return RegexSpanner(PATTERNS[name][0])


@functools.lru_cache(maxsize=None)
def hf_split(name: str):
    # Oniguruma reads "{1,3}+" as "({1,3})+", not as tiktoken's possessive interval.
    pattern = PATTERNS[name][0].replace(r"\p{N}{1,3}+", r"(?>\p{N}{1,3})")
    split = tokenizers.pre_tokenizers.Split(tokenizers.Regex(pattern), behavior="isolated")
    return split.pre_tokenize_str


def tiktoken_agrees(pattern: str, text: str, pieces: list[str]) -> bool:
    """Whether tiktoken splits ``text`` into ``pieces`` (see the module docstring)."""
    ranks = {bytes([b]): b for b in range(256)}
    for piece in pieces:
        ranks.setdefault(piece.encode("utf-8"), len(ranks))
    enc = tiktoken.Encoding("probe", pat_str=pattern, mergeable_ranks=ranks, special_tokens={})
    return enc.encode_ordinary(text) == [ranks[p.encode("utf-8")] for p in pieces]


def first_difference(a: list, b: list) -> str:
    i = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    lo = max(0, i - 2)
    return f"first difference at piece {i}: {a[lo:i + 3]!r} != {b[lo:i + 3]!r}"


def check_parity(name: str, text: str) -> None:
    pattern, tiktoken_is_oracle = PATTERNS[name]
    ours = spanner(name)
    pieces = ours.split(text)
    spans = ours.spans(text)
    assert [text[a:b] for a, b in spans] == pieces
    expected = hf_split(name)(text)
    hf_pieces = [piece for piece, _ in expected]
    assert pieces == hf_pieces, first_difference(pieces, hf_pieces)
    assert spans == [tuple(offsets) for _, offsets in expected]
    if tiktoken_is_oracle:
        assert tiktoken_agrees(pattern, text, pieces), "tiktoken splits differently"


# -- (a) every code point whose class depends on the Unicode version --------------------------

_CATEGORIES = {
    "L": ("Lu", "Ll", "Lt", "Lm", "Lo"),
    "M": ("Mn", "Mc", "Me"),
    "N": ("Nd", "Nl", "No"),
}
_NAMED = [0x017F, 0x212A, 0x0295, 0x001C, 0x001F, 0x200B, 0xFEFF, 0x180E, 0x0085, 0x00A0]


def _members(ranges) -> set[int]:
    return {cp for lo, hi in ranges for cp in range(lo, hi + 1)}


@functools.lru_cache(maxsize=None)
def all_code_points() -> str:
    return "".join(map(chr, range(0x110000)))


@functools.lru_cache(maxsize=None)
def version_boundary_code_points() -> list[int]:
    """Code points the regex module, unicodedata and our 16.0 tables do not all agree on."""
    everything = all_code_points()
    category14 = [unicodedata.category(ch) for ch in everything]  # Python 3.11: Unicode 14.0
    differ: set[int] = set(_NAMED)
    for name in ("L", "Lu", "Ll", "Lt", "Lm", "Lo", "M", "N", "WHITE_SPACE"):
        ours = _members(CLASSES[name])
        prop = r"\s" if name == "WHITE_SPACE" else rf"\p{{{name}}}"
        module = {m.start() for m in regex.finditer(prop, everything)}
        if name == "WHITE_SPACE":
            python = {cp for cp, ch in enumerate(everything) if ch.isspace()}
        else:
            cats = _CATEGORIES.get(name, (name,))
            python = {cp for cp, cat in enumerate(category14) if cat in cats}
        differ |= (ours ^ module) | (ours ^ python)
    # Lone surrogates cannot reach the oracles (Rust strings are UTF-8).
    return sorted(cp for cp in differ if not 0xD800 <= cp <= 0xDFFF)


def test_boundary_set_is_substantial():
    cps = version_boundary_code_points()
    assert 0x0295 in cps and 0x001C in cps
    assert len(cps) > 1000  # Unicode 15.0 and 16.0 alone added over 9,000 letters


@pytest.mark.parametrize("name", NAMES)
def test_version_boundary_code_points(name):
    text = " ".join("a" + ch + "1 " + ch + ch for ch in map(chr, version_boundary_code_points()))
    check_parity(name, text)


# -- (b) hypothesis ----------------------------------------------------------------------------

_CONTRACTIONS = sorted(
    {
        "'" + tail
        for base in ("s", "t", "re", "ve", "m", "ll", "d", "ſ", "K", "k")
        for tail in (base, base.upper(), base.capitalize(), base[:1] + base[1:].upper())
    }
)
_WHITESPACE = [
    "\t", "\n", "\r", " ", "\xa0", "\u3000", "\u2028", "\u2029", "\x85", "\x1c", "\x1f",
    "\x0b", "\x0c", "\u200b", "\ufeff", "\u180e", "\u202f", "\u205f", "\u1680", "\r\n",
    "  ", "   ", " \n", "\n\n", "\t\t",
]
_DIGITS = ["0", "7", "42", "123456", "\u0663", "\u096a", "\u2460", "\u216b", "\U0001d7d8", "½"]
_LETTERS = [
    "a", "Z", "word", "Word", "WORD", "é", "ß", "ǅ", "ʰ", "ʕ", "ſ", "K", "ﬆ", "Ω", "жизнь",
    "中文", "한국어", "ひらがな", "カタカナ", "עברית", "عربي", "ไทย", "नमस्ते", "ি", "\u0301",
    "\u20dd", "\u0488", "𝐀𝐛", "😀", "👍🏽", "\u200d", "\ufe0f", "\u0378", "\ue000", "\U0010ffff",
    "\U00010d4a", "\u088f", "\U0001e6c0",
]
_PUNCTUATION = list(".,!?-_()\"'/:;<>@#$%^&*[]{}|\\`~") + ["...", "--", "'", "''", "’"]

_boundary_chars = st.deferred(
    lambda: st.sampled_from([chr(c) for c in version_boundary_code_points()])
)
_atoms = st.one_of(
    st.sampled_from(_CONTRACTIONS),
    st.sampled_from(_WHITESPACE),
    st.sampled_from(_DIGITS),
    st.sampled_from(_LETTERS),
    st.sampled_from(_PUNCTUATION),
    _boundary_chars,
    st.characters(exclude_categories=("Cs",)),
)
texts = st.lists(_atoms, max_size=40).map("".join)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=texts)
def test_matches_oracles_on_generated_text(name, text):
    check_parity(name, text)


# -- specific semantics -----------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize(
    "text",
    [
        "x'ſa 'ſa 'Sa 'SA 'Ka 'ka 'Ll 'LL 'lL 'ſt he'S it'ſ",  # ſ folds to s; K to k
        "a  \n\nb  \n",
        "abc \n",
        "\n",
        "",
        "12345 1234567 \u0663\u0663\u0663\u0663",
        "ʕa ʕA Aʕ",  # U+0295: Ll in Unicode 16.0, Lo in 17.0
    ],
)
def test_named_cases(name, text):
    check_parity(name, text)


def test_long_s_is_a_contraction_letter():
    # (?i:'s) matches "'ſ" in tiktoken, HF tokenizers and here; llama.cpp's '[sS] does not.
    assert spanner("cl100k-tiktoken").split("'ſa") == ["'ſ", "a"]
    assert spanner("qwen3").split("'ſa") == ["'ſ", "a"]
    assert spanner("qwen2-llama.cpp").split("'ſa") == ["'ſa"]


def test_dollar_is_end_of_text():
    pattern = r"[^\n]+$|\n"
    assert RegexSpanner(pattern).split("ab\n") == ["\n"]
    assert tiktoken_agrees(pattern, "ab\n", ["\n"])
    assert regex.findall(pattern, "ab\n") == ["ab", "\n"]  # what plain `regex` would do


def test_possessive_interval():
    assert spanner("cl100k-tiktoken").split("1234567") == ["123", "456", "7"]


def test_unmatched_text_is_dropped():
    spanner_ = RegexSpanner(r"\p{N}+")
    assert spanner_.split("a12b3") == ["12", "3"]
    assert spanner_.spans("a12b3") == [(1, 3), (4, 5)]


def test_attributes():
    s = RegexSpanner(R50K)
    assert s.pattern == R50K
    assert "RegexSpanner(" in repr(s)


# -- the translated classes are exactly the Unicode 16.0 tables -------------------------------


def _ranges(members) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for cp in sorted(members):
        if out and out[-1][1] == cp - 1:
            out[-1] = (out[-1][0], cp)
        else:
            out.append((cp, cp))
    return out


def _complement(ranges) -> list[tuple[int, int]]:
    out, nxt = [], 0
    for lo, hi in ranges:
        if lo > nxt:
            out.append((nxt, lo - 1))
        nxt = hi + 1
    return out + ([(nxt, 0x10FFFF)] if nxt <= 0x10FFFF else [])


def _matched(pattern: str) -> list[tuple[int, int]]:
    """The code points one class matches, as merged ranges."""
    compiled = regex.compile(translate_pattern(f"(?:{pattern})+"))
    return [(m.start(), m.end() - 1) for m in compiled.finditer(all_code_points())]


@pytest.mark.parametrize("name", [k for k in CLASSES if k != "WHITE_SPACE"])
def test_property_classes_are_exact(name):
    ours = list(CLASSES[name])
    assert _matched(rf"\p{{{name}}}") == ours
    assert _matched(rf"\P{{{name}}}") == _complement(ours)
    assert _matched(rf"[^\p{{{name}}}]") == _complement(ours)


def test_white_space_is_exact():
    ws = list(WHITE_SPACE)
    assert len(_members(ws)) == 25
    assert not _members(ws) & {0x1C, 0x1D, 0x1E, 0x1F, 0x200B, 0xFEFF, 0x180E}
    assert _matched(r"\s") == ws
    assert _matched(r"\S") == _matched(r"[\S]") == _matched(r"[^\s]") == _complement(ws)


def test_combined_classes_are_exact():
    letters, numbers, ws = (_members(CLASSES[k]) for k in ("L", "N", "WHITE_SPACE"))
    assert _matched(r"[^\s\p{L}\p{N}]") == _complement(_ranges(ws | letters | numbers))
    assert _matched(r"[^\r\n\p{L}\p{N}]") == _complement(_ranges({10, 13} | letters | numbers))
    assert _matched(r"[\P{L}a]") == _complement(_ranges(letters - {ord("a")}))
    lu_lt = _members(CLASSES["Lu"]) | _members(CLASSES["Lt"])
    assert _matched(r"[\p{Lu}\p{Lt}]") == _ranges(lu_lt)


def test_explicit_translation_agrees():
    text = " ".join("a" + ch + "1 " + ch + ch for ch in map(chr, version_boundary_code_points()))
    for name, (pattern, _) in PATTERNS.items():
        explicit = regex.compile(translate_pattern(pattern, explicit=True))
        assert explicit.findall(text) == spanner(name).split(text), name


def test_tables_are_unicode_16():
    assert UNICODE_VERSION == "16.0.0"
    ud2 = pytest.importorskip("unicodedata2")
    if ud2.unidata_version != UNICODE_VERSION:
        pytest.skip(f"unicodedata2 {ud2.unidata_version} is not {UNICODE_VERSION}")
    result = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "gen_unicode_tables.py"), "--check"],
        capture_output=True, text=True,
    )
    assert result.returncode == 0, result.stderr


# -- errors -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "pattern, named",
    [
        (r"\p{P}+", "\\p{P}"),
        (r"[\p{S}\p{L}]", "\\p{S}"),
        (r"\p{Greek}", "\\p{Greek}"),
        (r"\d+", "\\d"),
        (r"\w+", "\\w"),
        (r"\bx", "\\b"),
        (r"(?m)a$", "'m'"),
        (r"(?x)a", "'x'"),
        (r"[[:alpha:]]", "nested"),
        (r"[a&&b]", "&&"),
        (r"[a-\p{L}]", "range endpoint"),
        (r"a\Z", "\\Z"),
        (r"[abc", "unterminated"),
    ],
)
def test_unsupported_constructs(pattern, named):
    with pytest.raises(UnsupportedTokenizerError) as info:
        RegexSpanner(pattern)
    assert named in str(info.value) and repr(pattern) in str(info.value)


@pytest.mark.parametrize("pattern", ["(ab", "a{2,1}", "*a"])
def test_pattern_that_does_not_compile(pattern):
    with pytest.raises(VocabFormatError) as info:
        RegexSpanner(pattern)
    assert repr(pattern) in str(info.value)
