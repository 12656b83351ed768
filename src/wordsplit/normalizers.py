r"""Text normalizers run before pre-tokenization, each exactly as HuggingFace ``tokenizers``
computes it: the runners of the normalizer stages of :mod:`wordsplit.spec.normalizers`
(:func:`normalizer_for`), and the registry of plug-in normalizers.

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
in the generated module ``wordsplit._nfc_data`` (``tools/gen_nfc_tables.py``).

A :class:`~wordsplit.spec.Sequence` of steps runs as a :class:`ProgramNormalizer`, each step
HF's normalizer of that kind with HF's data, carrying HF's alignment of each character.

What this module does not do: the alignments offsets need are :mod:`wordsplit.offsets`'s (a
program's through :meth:`ProgramNormalizer.alignment`); the UAX #15 stream-safe format is not
applied (HF does not apply it either). Lone surrogates are left as they are
(combining class 0, no decomposition); callers replace them before normalizing, since HF
cannot receive them at all.

>>> from wordsplit.spec import Lowercase, Nfc, Nfkc, Sequence
>>> normalizer_for(Nfc())("Cafe\u0301") == "Caf\u00e9"
True
>>> normalizer_for(Sequence((Nfkc(), Lowercase())))("\ufb01X")
'fix'
"""

from __future__ import annotations

import functools
import re
import unicodedata
from operator import itemgetter
from typing import Callable

from types import SimpleNamespace

from . import spec
from .protocols import Normalizer
from .registry import NORMALIZERS
from .sentencepiece_normalizers import MetaspaceNormalizer, SentencePieceNormalizer

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
    from ._nfc_data import (
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


def _decomposed(text: str, compatibility: bool = False) -> list[tuple[int, str]]:
    """``(combining class, character)`` of the canonical (or compatibility) decomposition of
    ``text``, canonically ordered: NFD (NFKD) as a list."""
    # Decomposition (src/decompose.rs, src/normalize.rs): the crate's tables are already fully
    # recursive, and Hangul syllables are split algorithmically.
    data = _data()
    table = data.compatibility if compatibility else data.decomposition
    chars: list[tuple[int, str]] = []
    for ch in text:
        if _S_BASE <= ord(ch) < _S_BASE + _S_COUNT:
            decomposed = _decompose_hangul(ch)
        else:
            decomposed = table.get(ch, ch)
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
    return chars


def _composed(chars: list[tuple[int, str]]) -> str:
    """Canonical composition of a decomposed, canonically ordered text."""
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


def _nfc_piece(piece: str) -> str:
    """NFC of one piece: a boundary (or nothing) followed by a run of active characters."""
    return _composed(_decomposed(piece))


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
        parts.append("".join(ch for _, ch in _decomposed(run.group(), compatibility)))
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


_NAMED_STEPS = {"NFC": nfc, "NFD": nfd, "NFKC": nfkc, "NFKD": nfkd, "Lowercase": lowercase,
                "StripAccents": strip_accents}


class ProgramNormalizer:
    r"""A normalizer program (:func:`normalizer_program`): HF's normalizers in sequence.

    Each step is HF's: NFC/NFD/NFKC/NFKD with the crate's Unicode 9.0 data; ``Lowercase`` per
    character (:func:`lowercase`); ``Strip`` trims Rust's whitespace (:data:`WHITESPACE`);
    ``StripAccents`` drops combining marks; ``Replace`` replaces every match of a literal
    string, or of a regex found as Oniguruma finds matches (Unicode 16.0 classes, an empty
    match right after a match skipped), with ``content`` taken literally; ``Prepend`` prefixes
    non-empty text; ``PrefixSpace`` prefixes a space to non-empty text that does not start
    with one.

    Args:
        program: the :class:`~wordsplit.spec.Sequence` of steps.

    Raises:
        VocabFormatError: a regex that does not compile.
        UnsupportedTokenizerError: a regex construct wordsplit does not translate.

    >>> from wordsplit.spec import Sequence, Strip
    >>> strip = ProgramNormalizer(Sequence((Strip(left=False, right=True),)))
    >>> strip("  a\u3000 ")
    '  a'
    """

    def __init__(self, program: spec.Sequence) -> None:
        self.program = program
        self.steps = program.normalizers
        # Each Replace step's matches, `text -> [(start, end), ...]` in characters (for offsets).
        self._matchers = [_replace_matcher(step) if isinstance(step, spec.Replace) else None for step in self.steps]
        self._functions = [self._function(step, matcher) for step, matcher in zip(self.steps, self._matchers)]

    def alignment(self, text: str) -> "tuple[str, list[tuple[int, int, bool]] | None]":
        r"""The normalized ``text`` and each normalized character's alignment to ``text`` as HF
        carries it through the steps (None: each character is itself); see
        :func:`wordsplit.offsets.program_alignment`.

        >>> from wordsplit.spec import Lowercase, Sequence
        >>> ProgramNormalizer(Sequence((Lowercase(),))).alignment("\u0130a")
        ('i̇a', [(0, 1, False), (0, 1, False), (1, 2, True)])
        """
        from .offsets import program_alignment

        return program_alignment(self, text)

    def alignment_parts(self, text: str) -> "tuple[str, list[tuple[int, int, bool]] | None, int]":
        """:meth:`alignment` in the parts the native engine takes (see
        :func:`wordsplit.offsets.program_alignment_parts`).

        >>> from wordsplit.spec import Prepend, Sequence
        >>> ProgramNormalizer(Sequence((Prepend("_"),))).alignment_parts("ab")
        ('_ab', [(0, 1, False)], 2)
        """
        from .offsets import program_alignment_parts

        return program_alignment_parts(self, text)

    @staticmethod
    def _function(step: spec.Stage, matcher: "Callable[[str], list[tuple[int, int]]] | None") -> Callable[[str], str]:
        kind = step.kind
        if kind in _NAMED_STEPS:
            return _NAMED_STEPS[kind]
        if isinstance(step, spec.Strip):
            if step.left and step.right:
                return lambda text: text.strip(WHITESPACE)
            if step.left:
                return lambda text: text.lstrip(WHITESPACE)
            if step.right:
                return lambda text: text.rstrip(WHITESPACE)
            return identity
        if isinstance(step, spec.Prepend):
            prepend = step.prepend
            return lambda text: prepend + text if text else text
        if kind == "PrefixSpace":
            # (HF's prepend aligns the new text to the first character: empty text stays empty)
            return lambda text: " " + text if text and not text.startswith(" ") else text
        content = step.content
        if not step.regex:
            # HF escapes the string into a regex: every non-overlapping occurrence, leftmost
            # first, as str.replace finds them (an empty string matches between all characters).
            # Empty text has no match at all for HF, not even an empty one.
            literal = step.pattern
            return lambda text: text.replace(literal, content) if text else text
        return _replacer(matcher, content)

    def __call__(self, text: str) -> str:
        for function in self._functions:
            text = function(text)
        return text

    def __repr__(self) -> str:
        return f"ProgramNormalizer({self.program!r})"


def _replace_matcher(step: spec.Replace) -> Callable[[str], list[tuple[int, int]]]:
    """The ``(start, end)`` character ranges a Replace ``pattern`` matches in a text, as HF finds
    them (none in empty text, not even an empty one).

    Raises:
        UnsupportedTokenizerError: with a non-empty ``content``, a pattern that matches the
            empty string at the start of a text: HF aligns the text it puts there to nothing,
            and its pre-tokenizer then fails ("index out of bounds") or repeats that text, so
            there is no result to reproduce. A pattern that matches so at the start of a
            one-character text is refused here (when the vocabulary is loaded); any other, by
            the matcher when a text makes it match so.
    """
    content = step.content
    pattern = {"Regex" if step.regex else "String": step.pattern}  # (as HF's JSON spells it, for messages)
    if not step.regex:
        literal = step.pattern
        if not literal and content:
            raise _empty_start_error(pattern, content, None)

        def literal_matches(text: str) -> list[tuple[int, int]]:
            if not text:
                return []
            if not literal:  # (as str.replace: an empty match at every position, both ends too)
                return [(i, i) for i in range(len(text) + 1)]
            matches, position = [], text.find(literal)
            while position >= 0:
                matches.append((position, position + len(literal)))
                position = text.find(literal, position + len(literal))
            return matches

        return literal_matches
    matcher = _regex_matcher(pattern["Regex"])
    if not content:
        return matcher
    for probe in _EMPTY_START_PROBES:
        if matcher(probe)[:1] == [(0, 0)]:
            raise _empty_start_error(pattern, content, None)

    def checked(text: str) -> list[tuple[int, int]]:
        matches = matcher(text)
        if matches[:1] == [(0, 0)]:
            raise _empty_start_error(pattern, content, text)
        return matches

    return checked


# One character of each kind a pattern may look at: ASCII, letters of other scripts, marks,
# spaces, digits, symbols, emoji. Not "\n": HF's `$` matches before it, and `$` with content
# loads (a text that starts with "\n" is refused when it comes).
_EMPTY_START_PROBES = [chr(c) for c in range(0x20, 0x7F)] + list(
    "\t\r\xa0\u3000\u2028\xe9\u0301\u0308\u0391\u03b1\u0416\u05d0\u0627\u0905\u65e5\u3042\uac00\u0660"
    "\u00b2\u2160\u00a7\u2581\uff21\ufb01\U0001f980\x00\x1c"
)


def _empty_start_error(pattern: dict, content: str, text: "str | None"):
    from .errors import UnsupportedTokenizerError

    where = "a text" if text is None else repr(text[:40])
    return UnsupportedTokenizerError(
        f"the Replace pattern {pattern!r} matches the empty string at the start of {where}, where it would put "
        f"{content!r}; HF aligns that text to nothing and its pre-tokenizer then fails or repeats it, so there is "
        "no result to reproduce; use a Prepend normalizer to put text before each segment, or a pattern that "
        "cannot match the empty string at the start"
    )


def _regex_matcher(pattern: str) -> Callable[[str], list[tuple[int, int]]]:
    import regex

    from .errors import UnsupportedTokenizerError, VocabFormatError
    from .spanners.hf_split import find_matches
    from .spanners.regex import translate_pattern

    try:
        compiled = regex.compile(translate_pattern(pattern, line_anchors=True))
    except regex.error as exc:
        raise VocabFormatError(f"the Replace pattern {pattern!r} does not compile: {exc}") from None
    except RecursionError:
        raise UnsupportedTokenizerError(f"the Replace pattern {pattern[:80]!r} nests too deeply") from None

    def matches(text: str) -> list[tuple[int, int]]:
        return list(find_matches(compiled, text)) if text else []

    return matches


def _replacer(matches: Callable[[str], list[tuple[int, int]]], content: str) -> Callable[[str], str]:
    """Replace what ``matches`` finds in a text with ``content``, taken literally."""

    def replace(text: str) -> str:
        parts, done = [], 0
        for start, end in matches(text):
            parts.append(text[done:start])
            parts.append(content)
            done = end
        if not parts:
            return text
        parts.append(text[done:])
        return "".join(parts)

    return replace


def normalizer_for(stage: spec.Stage) -> Normalizer:
    """The function that runs a normalizer stage (a built-in one made once per stage: a
    program compiles its regexes); a plug-in's is the function registered under its name.

    Raises:
        UnknownComponentError: a plug-in name nothing registers.
        VocabFormatError, UnsupportedTokenizerError: a program's regex that does not compile.

    >>> from wordsplit.spec import Metaspace, PluginNormalizer
    >>> normalizer_for(Metaspace())("a b"), normalizer_for(PluginNormalizer("none"))("x")
    ('▁a▁b', 'x')
    """
    if isinstance(stage, spec.PluginNormalizer):
        return NORMALIZERS.get(stage.name)
    if isinstance(stage, spec.Metaspace) and isinstance(stage.before, spec.PluginNormalizer):
        return MetaspaceNormalizer(stage, normalizer_for(stage.before))
    return _built_in(stage)


@functools.lru_cache(maxsize=256)
def _built_in(stage: spec.Stage) -> Normalizer:
    if isinstance(stage, spec.Sequence):
        return ProgramNormalizer(stage)
    if isinstance(stage, spec.SentencePieceNormalizer):
        return SentencePieceNormalizer(stage)
    if isinstance(stage, spec.Metaspace):
        return MetaspaceNormalizer(stage, normalizer_for(stage.before))
    if isinstance(stage, spec.NoNormalizer):
        return identity
    if isinstance(stage, (spec.Nfc, spec.Nfd, spec.Nfkc, spec.Nfkd)):
        return _NAMED_STEPS[stage.kind]
    return ProgramNormalizer(spec.Sequence((stage,)))  # another step alone: a program of one


NORMALIZERS.set_stage_runner(normalizer_for)


def register_normalizer(name: str) -> Callable[[Normalizer], Normalizer]:
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


def get_normalizer(name: str) -> Normalizer:
    """The normalizer registered as ``name``; unknown names raise ``UnknownComponentError``.

    >>> get_normalizer("none")("x")
    'x'
    >>> get_normalizer("nfdk")  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    wordsplit.errors.UnknownComponentError: unknown normalizer 'nfdk'; known: nfc, nfd, nfkc, nfkd,
        none. Did you mean 'nfd'?
    """
    return NORMALIZERS.get(name)
