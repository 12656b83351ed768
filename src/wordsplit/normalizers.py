r"""Text normalizers run before pre-tokenization: ``"none"`` and an HF-exact ``"nfc"``.

:func:`nfc` reproduces HuggingFace ``tokenizers.normalizers.NFC`` character for character. HF
normalizes with the Rust crate ``unicode-normalization-alignments`` 0.1.12, whose data is
**Unicode 9.0**, while Python's ``unicodedata`` is newer (14.0 on Python 3.11). The two disagree on
text using characters added after 9.0: HF gives such characters combining class 0 and no
decomposition, so it neither reorders nor composes them::

    >>> import unicodedata
    >>> nfc("a\u07fd\u0334") == unicodedata.normalize("NFC", "a\u07fd\u0334")
    False

The algorithm and data therefore mirror the crate rather than ``unicodedata``: canonical
decomposition with the crate's tables (Hangul syllables algorithmically), canonical ordering
(stable sort of each run of non-starters by combining class), then canonical composition with
the usual blocking rule. The tables live in the generated module ``wordsplit._nfc_data``
(``tools/gen_nfc_tables.py``).

What this module does not do: NFD, NFKC and NFKD are not provided; no offsets or alignments are
tracked; the UAX #15 stream-safe format is not applied (HF does not apply it either). Lone
surrogates are left as they are (combining class 0, no decomposition); callers replace them
before normalizing, since HF cannot receive them at all.

>>> get_normalizer("nfc")("Cafe\u0301") == "Caf\u00e9"
True
"""

from __future__ import annotations

import functools
import re
import unicodedata
from operator import itemgetter
from typing import Callable

from types import SimpleNamespace

from .registry import Registry

NORMALIZERS: Registry[Callable[[str], str]] = Registry("normalizer")

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
    from ._nfc_data import CANONICAL_COMBINING_CLASS, CANONICAL_COMPOSITION, CANONICAL_DECOMPOSITION

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
    return SimpleNamespace(
        # Keyed by 1- and 2-character strings, so that lookups need no ord()/chr().
        ccc={chr(cp): ccc for cp, ccc in CANONICAL_COMBINING_CLASS.items()},
        decomposition={chr(cp): "".join(map(chr, cps)) for cp, cps in CANONICAL_DECOMPOSITION.items()},
        composition={chr(a) + chr(b): chr(c) for (a, b), c in CANONICAL_COMPOSITION.items()},
        active_run=re.compile(f"[{_char_class(active)}]+"),
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


def _nfc_piece(piece: str) -> str:
    """NFC of one piece: a boundary (or nothing) followed by a run of active characters."""
    # Canonical decomposition (src/decompose.rs, src/normalize.rs): the crate's tables are
    # already fully recursive, and Hangul syllables are split algorithmically.
    data = _data()
    chars: list[tuple[int, str]] = []
    for ch in piece:
        if _S_BASE <= ord(ch) < _S_BASE + _S_COUNT:
            decomposed = _decompose_hangul(ch)
        else:
            decomposed = data.decomposition.get(ch, ch)
        chars.extend((data.ccc.get(d, 0), d) for d in decomposed)

    # Canonical ordering (src/decompose.rs, sort_pending): stable-sort each run of non-starters.
    i, n = 0, len(chars)
    while i < n:
        if chars[i][0] == 0:
            i += 1
            continue
        j = i + 1
        while j < n and chars[j][0]:
            j += 1
        if j - i > 1:
            chars[i:j] = sorted(chars[i:j], key=itemgetter(0))
        i = j

    # Canonical composition (src/recompose.rs). `starter` is the index in `out` of the last
    # starter; `last_ccc` is the class of the last character kept after it, -1 when none. A
    # character is blocked from the starter when that class is >= its own, which with -1 as
    # "nothing in between" is exactly `last_ccc >= ccc`.
    out: list[str] = []
    starter, last_ccc = -1, -1
    for ccc, ch in chars:
        if starter >= 0 and last_ccc < ccc:
            composite = _compose(out[starter], ch)
            if composite is not None:
                out[starter] = composite
                continue
        if ccc == 0:
            starter, last_ccc = len(out), -1
        else:
            last_ccc = ccc
        out.append(ch)
    return "".join(out)


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


def register_normalizer(name: str) -> Callable[[Callable[[str], str]], Callable[[str], str]]:
    """Decorator: register ``fn(text: str) -> str`` as a normalizer, for ``Vocab(normalizer=name)``.

    The function runs on each stretch of text between special/added token literals, before
    the spanner. On the native backend it is called from the native engine with the GIL held
    (see docs/plugins.md for what such a mix costs).

    Raises:
        DuplicateNameError: ``name`` is taken.

    >>> @register_normalizer("casefold")
    ... def casefold(text):
    ...     return text.casefold()
    >>> get_normalizer("casefold")("Straße")
    'strasse'
    >>> _ = NORMALIZERS.remove("casefold")  # (this example cleans up after itself)
    """
    return NORMALIZERS.register(name)


def get_normalizer(name: str) -> Callable[[str], str]:
    """The normalizer registered as ``name``; unknown names raise ``UnknownComponentError``.

    >>> get_normalizer("none")("x")
    'x'
    >>> get_normalizer("nfd")
    Traceback (most recent call last):
    ...
    wordsplit.errors.UnknownComponentError: unknown normalizer 'nfd'; known: nfc, none. Did you mean 'nfc'?
    """
    return NORMALIZERS.get(name)
