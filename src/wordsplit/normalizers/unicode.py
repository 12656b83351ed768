r"""HF's Unicode normalization forms (NFC, NFD, NFKC, NFKD), ``Lowercase`` and ``StripAccents``,
exactly as HuggingFace ``tokenizers`` computes them: one implementation of the algorithm
(:func:`unicode_changes`, which also says how each output character relates to the input, as
offsets need), and the forms built on it.

:func:`nfc` reproduces HuggingFace ``tokenizers.normalizers.NFC`` character for character. HF
normalizes with the Rust crate ``unicode-normalization-alignments`` 0.1.12, whose data is
**Unicode 9.0**, while Python's ``unicodedata`` is newer (14.0 on Python 3.11). The two disagree on
text using characters added after 9.0: HF gives such characters combining class 0 and no
decomposition, so it neither reorders nor composes them::

    >>> import unicodedata
    >>> nfc("a\u07fd\u0334") == unicodedata.normalize("NFC", "a\u07fd\u0334")
    False

The algorithm and data therefore mirror the crate rather than ``unicodedata``: canonical (or,
for NFKC/NFKD, compatibility) decomposition with the crate's tables (Hangul syllables
algorithmically), canonical ordering (stable sort of each run of non-starters by combining
class), then, for NFC/NFKC, canonical composition with the usual blocking rule. The tables live
in the generated module ``wordsplit._nfc_data`` (``tools/gen_nfc_tables.py``). The UAX #15
stream-safe format is not applied (HF does not apply it either). Lone surrogates are left as
they are (combining class 0, no decomposition); callers replace them before normalizing, since
HF cannot receive them at all.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from types import SimpleNamespace

from ..registry import NORMALIZERS

__all__ = ["WHITESPACE", "identity", "lowercase", "nfc", "nfd", "nfkc", "nfkd", "strip_accents", "unicode_changes"]

# Conjoining jamo constants (Unicode chapter 3.12), as in the crate's src/normalize.rs.
_S_BASE, _L_BASE, _V_BASE, _T_BASE = 0xAC00, 0x1100, 0x1161, 0x11A7
_L_COUNT, _V_COUNT, _T_COUNT = 19, 21, 28
_N_COUNT = _V_COUNT * _T_COUNT
_S_COUNT = _L_COUNT * _N_COUNT



def _char_class(code_points: set[int]) -> str:
    """A regex character class body (``a-cx``...) matching exactly ``code_points``."""
    parts, ordered, i = [], sorted(code_points), 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        low, high = re.escape(chr(ordered[i])), re.escape(chr(ordered[j]))
        parts.append(low if i == j else f"{low}-{high}")
        i = j + 1
    return "".join(parts)


@functools.cache
def _data() -> SimpleNamespace:
    """HF's NFC tables, loaded on first use: the native backend normalizes in Rust, so most
    programs never need them, and importing them costs ~30 ms."""
    from .._nfc_data import (
        CANONICAL_COMBINING_CLASS,
        CANONICAL_COMPOSITION,
        CANONICAL_DECOMPOSITION,
        COMBINING_MARKS,
        COMPATIBILITY_DECOMPOSITION,
    )

    # Splitting the text into independent pieces. Call a character a *boundary* when it is a
    # starter that no earlier character can interact with: NFC never reorders across it, never
    # composes it with what precedes it, and nothing after it can reach past it. NFC then works
    # piece by piece, a piece being a boundary followed by a run of non-boundaries ("active"
    # characters), and a boundary followed by another boundary is already NFC. Active are:
    # non-starters; second halves of compositions (including Hangul V jamo and the T jamo after
    # T_BASE, which is all the crate's compose_hangul accepts); and decomposable characters other
    # than composites, which recompose to themselves ("é" is a boundary: "e" + U+0301 gives "é"
    # back). That last rule relies on every composite's decomposition starting with a starter that
    # is not a second half, which tests/test_normalizers.py checks on the data.
    seconds = (
        {second for _, second in CANONICAL_COMPOSITION}
        | set(range(_V_BASE, _V_BASE + _V_COUNT))
        | set(range(_T_BASE + 1, _T_BASE + _T_COUNT))
    )
    active = (
        set(CANONICAL_COMBINING_CLASS)
        | seconds
        | (set(CANONICAL_DECOMPOSITION) - set(CANONICAL_COMPOSITION.values()))
    )
    decomposing = set(CANONICAL_COMBINING_CLASS) | set(CANONICAL_DECOMPOSITION)
    return SimpleNamespace(
        # Keyed by 1- and 2-character strings, so that lookups need no ord()/chr().
        ccc={chr(cp): ccc for cp, ccc in CANONICAL_COMBINING_CLASS.items()},
        decomposition={chr(cp): "".join(map(chr, cps)) for cp, cps in CANONICAL_DECOMPOSITION.items()},
        # The crate's decompose_compatible: the compatibility table first, then the canonical one.
        compatibility={
            **{chr(cp): "".join(map(chr, cps)) for cp, cps in CANONICAL_DECOMPOSITION.items()},
            **{chr(cp): "".join(map(chr, cps)) for cp, cps in COMPATIBILITY_DECOMPOSITION.items()},
        },
        no_marks={cp: None for cp in COMBINING_MARKS},
        composition={chr(a) + chr(b): chr(c) for (a, b), c in CANONICAL_COMPOSITION.items()},
        active_run=re.compile(f"[{_char_class(active)}]+"),
        # Runs of characters that decompose or are non-starters: decomposition and canonical
        # ordering never reach past the (inert, starter) characters around such a run.
        decomposing_run=re.compile(f"[{_char_class(decomposing)}\uac00-\ud7a3]+"),
        compatibility_run=re.compile(f"[{_char_class(decomposing | set(COMPATIBILITY_DECOMPOSITION))}\uac00-\ud7a3]+"),
    )


def _decompose_hangul(syllable: str) -> str:
    """L V or L V T jamo of a precomposed Hangul syllable (src/normalize.rs, decompose_hangul)."""
    s_index = ord(syllable) - _S_BASE
    t_index = s_index % _T_COUNT
    jamo = chr(_L_BASE + s_index // _N_COUNT) + chr(_V_BASE + s_index % _N_COUNT // _T_COUNT)
    return jamo + chr(_T_BASE + t_index) if t_index else jamo


def _compose(first: str, second: str) -> str | None:
    """The primary composite of ``first`` + ``second``, if any (src/normalize.rs, compose)."""
    composite = _data().composition.get(first + second)
    if composite is not None:
        return composite
    a, b = ord(first), ord(second)
    if _L_BASE <= a < _L_BASE + _L_COUNT and _V_BASE <= b < _V_BASE + _V_COUNT:
        return chr(_S_BASE + ((a - _L_BASE) * _V_COUNT + b - _V_BASE) * _T_COUNT)
    # An LV syllable (no trailing consonant yet) takes a T jamo; T_BASE itself is not one.
    if (
        _S_BASE <= a < _S_BASE + _S_COUNT
        and (a - _S_BASE) % _T_COUNT == 0
        and _T_BASE < b < _T_BASE + _T_COUNT
    ):
        return chr(a + b - _T_BASE)
    return None


def unicode_changes(text: str, form: str = "NFC") -> list[tuple[str, int]]:
    r"""HF's ``form`` (NFC, NFD, NFKC or NFKD) of ``text`` as ``unicode-normalization-alignments``
    yields it: each output character with its change (0: replaces the next original character;
    -n: replaces it and removes the n after it; +1: inserted).

    >>> unicode_changes("e\u0301x")
    [('é', -1), ('x', 0)]
    >>> unicode_changes("\ufb01", "NFKD")
    [('f', 0), ('i', 1)]
    """
    data = _data()
    ccc = data.ccc
    table = data.compatibility if form in ("NFKC", "NFKD") else data.decomposition
    # Decomposition: the first character of each original's decomposition replaces it (0),
    # the others are inserted (+1).
    chars: list[tuple[int, str, int]] = []
    for ch in text:
        parts = _decompose_hangul(ch) if _S_BASE <= ord(ch) < _S_BASE + _S_COUNT else table.get(ch, ch)
        for k, part in enumerate(parts):
            chars.append((ccc.get(part, 0), part, 1 if k else 0))
    # Canonical ordering: a stable sort of each run of non-starters; changes move along.
    i, n = 0, len(chars)
    while i < n:
        if chars[i][0] == 0:
            i += 1
            continue
        j = i + 1
        while j < n and chars[j][0]:
            j += 1
        if j - i > 1:
            chars[i:j] = sorted(chars[i:j], key=lambda c: c[0])
        i = j
    if form in ("NFD", "NFKD"):
        return [(ch, change) for _, ch, change in chars]
    # Canonical composition; a composite's change is the crate's `k + change - 1`.
    out: list[tuple[str, int]] = []
    starter, last_ccc = -1, -1
    for klass, ch, change in chars:
        if starter >= 0 and last_ccc < klass:
            composite = _compose(out[starter][0], ch)
            if composite is not None:
                out[starter] = (composite, out[starter][1] + change - 1)
                continue
        if klass == 0:
            starter, last_ccc = len(out), -1
        else:
            last_ccc = klass
        out.append((ch, change))
    return out


def _nfc_piece(piece: str) -> str:
    """NFC of one piece: a boundary (or nothing) followed by a run of active characters."""
    return "".join(ch for ch, _ in unicode_changes(piece, "NFC"))


# Short pieces (a letter and its accents, a Hangul syllable's jamo) repeat a lot in real text,
# so they are cached; long ones are rare and would only bloat the cache.
_nfc_short_piece = functools.lru_cache(maxsize=16384)(_nfc_piece)


def _nfc_without_shortcuts(text: str) -> str:
    """NFC computed piece by piece, without the whole-text fast paths of :func:`nfc`."""
    parts, done = [], 0
    for run in _data().active_run.finditer(text):
        # The piece starts with the boundary just before the run (runs are maximal, so that
        # character never belongs to the previous run). Searching for runs alone, rather than
        # for "boundary + run", lets `re` skip quickly over inactive text.
        start, end = max(run.start() - 1, 0), run.end()
        piece = text[start:end]
        parts.append(text[done:start])
        parts.append(_nfc_short_piece(piece) if len(piece) <= 16 else _nfc_piece(piece))
        done = end
    parts.append(text[done:])
    return "".join(parts)


@NORMALIZERS.register("nfc")
def nfc(text: str) -> str:
    r"""Unicode NFC exactly as HuggingFace tokenizers computes it (Unicode 9.0 data).

    >>> nfc("e\u0301") == "\u00e9"
    True
    >>> nfc("\U00011935\U00011930") == "\U00011935\U00011930"  # composite new since 9.0
    True
    """
    if text.isascii():
        return text
    # Shortcut: text that is NFC under Python's Unicode (14.0 on 3.11, never older than 9.0) is
    # NFC under HF's 9.0 data too, so HF returns it unchanged. Why:
    # 1. The two data sets differ only on characters absent from HF's tables (added after 9.0):
    #    Unicode's stability policies freeze the combining class and decomposition of assigned
    #    characters, and make any new composite of older characters a composition exclusion.
    #    HF treats an absent character as a starter that neither decomposes nor composes, so HF's
    #    NFC of the text is HF's NFC of each piece between such characters, concatenated.
    # 2. In an NFC string no character absorbs part of a later one during composition (the
    #    first character that did would come out different, so the string would change), so
    #    every substring of an NFC string is NFC. Each piece is therefore NFC under Python's
    #    data, which agree with HF's on it, so HF leaves every piece, and the text, unchanged.
    # tests/test_normalizers.py checks point 1 on every code point and the claim itself on
    # random NFC text that mixes in post-9.0 marks.
    if unicodedata.is_normalized("NFC", text):
        return text
    return _nfc_without_shortcuts(text)


@NORMALIZERS.register("none")
def identity(text: str) -> str:
    r"""Return ``text`` unchanged.

    >>> identity("e\u0301") == "e\u0301"
    True
    """
    return text


@NORMALIZERS.register("nfd")
def nfd(text: str) -> str:
    r"""Unicode NFD exactly as HuggingFace tokenizers computes it (Unicode 9.0 data).

    >>> nfd("\u00e9") == "e\u0301"
    True
    """
    if text.isascii():
        return text
    # Text that is NFD under Python's (newer) data is NFD under HF's: decompositions of assigned
    # characters are frozen, a character HF does not know neither decomposes nor reorders for
    # it (class 0), and each run of marks between such characters is part of a run Python has
    # already sorted by the same classes. (NFKD: the same argument.)
    if unicodedata.is_normalized("NFD", text):
        return text
    return _decompose_runs(text, _data().decomposing_run, False)


def _decompose_runs(text: str, runs: "re.Pattern[str]", compatibility: bool) -> str:
    """NFD (NFKD) of ``text``, computed on each run of ``runs`` alone (see :func:`_data`)."""
    parts, done = [], 0
    for run in runs.finditer(text):
        parts.append(text[done:run.start()])
        parts.append("".join(ch for ch, _ in unicode_changes(run.group(), "NFKD" if compatibility else "NFD")))
        done = run.end()
    parts.append(text[done:])
    return "".join(parts)


@NORMALIZERS.register("nfkd")
def nfkd(text: str) -> str:
    r"""Unicode NFKD exactly as HuggingFace tokenizers computes it (Unicode 9.0 data).

    >>> nfkd("\ufb01\u00b2")
    'fi2'
    """
    if text.isascii() or unicodedata.is_normalized("NFKD", text):
        return text
    return _decompose_runs(text, _data().compatibility_run, True)


@NORMALIZERS.register("nfkc")
def nfkc(text: str) -> str:
    r"""Unicode NFKC exactly as HuggingFace tokenizers computes it (Unicode 9.0 data).

    >>> nfkc("\uff21\u2460") == "A1"
    True
    """
    if text.isascii():
        return text
    # NFKC is canonical composition of the compatibility decomposition, and NFC leaves a
    # decomposed text decomposed before composing (the crate's new_compatible does the same).
    return _nfc_without_shortcuts(nfkd(text))


# HF's Lowercase is Rust's char::to_lowercase, one character at a time: no final-sigma rule
# (str.lower() turns a word-final "Σ" into "ς"), and the Unicode of the Rust that built
# tokenizers (17.0 for tokenizers 0.23.3). These are the mappings Unicode 15.0-17.0 added,
# which Python 3.11's str.lower() (Unicode 14.0) leaves unchanged; tests/test_normalizers.py
# compares every code point with HF's.
_NEW_LOWERCASE = {
    0x1C89: 0x1C8A, 0xA7CB: 0x0264, 0xA7CC: 0xA7CD, 0xA7CE: 0xA7CF, 0xA7D2: 0xA7D3, 0xA7D4: 0xA7D5,
    0xA7DA: 0xA7DB, 0xA7DC: 0x019B,
    **{cp: cp + 0x20 for cp in range(0x10D50, 0x10D66)},  # Garay
    **{cp: cp + 0x1B for cp in range(0x16EA0, 0x16EB9)},  # Beria Erfe
}


def lowercase(text: str) -> str:
    r"""HF's ``Lowercase``: each character's full lowercase mapping, without context.

    >>> lowercase("ΟΔΟΣ İ") == "οδοσ i\u0307"
    True
    """
    if text.isascii():
        return text.lower()
    if "\u03a3" in text:
        text = text.replace("\u03a3", "\u03c3")  # so that lower() applies no final-sigma rule
    return text.lower().translate(_NEW_LOWERCASE)


# Rust's char::is_whitespace (White_Space), which HF's Strip trims.
WHITESPACE = "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009" \
             "\u200a\u2028\u2029\u202f\u205f\u3000"


def strip_accents(text: str) -> str:
    r"""HF's ``StripAccents``: every combining mark (General_Category M, Unicode 9.0) removed.

    >>> strip_accents("e\u0301t\u00e9") == "et\u00e9"  # (a precomposed é is no mark: NFD it first)
    True
    """
    if text.isascii():
        return text
    return text.translate(_data().no_marks)
