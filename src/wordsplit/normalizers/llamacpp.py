"""llama.cpp's normalizers of GGUF WordPiece (``bert``) and Unigram (``t5``) vocabularies: what
runs the stages :class:`wordsplit.spec.LlamaCppBertNormalizer` and
:class:`wordsplit.spec.LlamaCppUnigramNormalizer` (``llama-vocab.cpp``'s
``llm_tokenizer_wpm_session::preprocess`` and ``llm_tokenizer_ugm_session::normalize``).

llama.cpp runs neither HF's ``BertNormalizer`` nor ``sentencepiece``'s normalizer: its WordPiece
preprocessing maps one code point to at most one, with its own tables
(:mod:`._llamacpp_unicode`, Unicode 15.1 categories and a one-code-point "NFD"), and its Unigram
normalizer treats spaces a byte at a time, so that, unlike ``sentencepiece``, two spaces inside
one output of the character map and a trailing ``▁`` typed in the text are kept as llama.cpp
keeps them.

>>> from wordsplit import spec
>>> LlamaCppBertNormalizer(spec.LlamaCppBertNormalizer())("Ça\\u0301 İ\\x00x")
'ca ix'
>>> LlamaCppUnigramNormalizer(spec.LlamaCppUnigramNormalizer(True, True))("  a   b▁ ")
'▁a▁b▁'
"""

from __future__ import annotations

import bisect

from .. import spec
from ..sentencepiece import SPACE
from ._llamacpp_unicode import CONTROL, LOWERCASE, MARK, NFD_FIRST
from .precompiled import charsmap_of, spm_chunks

__all__ = ["LLAMA_CPP_WHITESPACE", "LlamaCppBertNormalizer", "LlamaCppUnigramNormalizer", "in_ranges"]

#: llama.cpp's white space (``unicode_set_whitespace``): Unicode's White_Space code points.
LLAMA_CPP_WHITESPACE = frozenset([*range(0x09, 0x0E), 0x20, 0x85, 0xA0, 0x1680, *range(0x2000, 0x200B), 0x2028,
                                  0x2029, 0x202F, 0x205F, 0x3000])

_NFD_STARTS = [first for first, _, _ in NFD_FIRST]
_LOWER = dict(LOWERCASE)


def in_ranges(ranges, starts: list[int], cp: int) -> bool:
    """Whether ``cp`` is in one of the sorted inclusive ``(first, last)`` ``ranges`` (``starts``:
    their firsts)."""
    at = bisect.bisect_right(starts, cp) - 1
    return at >= 0 and cp <= ranges[at][1]


_CONTROL_STARTS = [first for first, _ in CONTROL]
_MARK_STARTS = [first for first, _ in MARK]


def nfd_first(cp: int) -> int:
    """llama.cpp's ``unicode_cpts_normalize_nfd`` of one code point: the first code point of its
    NFD (Unicode 15.1).

    >>> chr(nfd_first(ord("é"))), chr(nfd_first(ord("한")))
    ('e', 'ᄒ')
    """
    at = bisect.bisect_right(_NFD_STARTS, cp) - 1
    if at >= 0:
        first, last, to = NFD_FIRST[at]
        if cp <= last:
            return to
    return cp


class _CharTable(dict):
    """``str.translate``'s table of one normalizer: each code point's output (None: dropped),
    worked out when the text first holds it."""

    def __init__(self, lowercase: bool, strip_accents: bool) -> None:
        super().__init__()
        self.lowercase, self.strip_accents = lowercase, strip_accents

    def __missing__(self, cp: int):
        out = self.output(cp)
        self[cp] = out
        return out

    def output(self, cp: int):
        """The code point ``cp`` becomes, or None when it is dropped (the order of
        ``preprocess``: NFD, then white space kept, then NUL, U+FFFD and controls dropped,
        then marks dropped, then lowercase)."""
        if self.strip_accents:
            cp = nfd_first(cp)
        if cp in LLAMA_CPP_WHITESPACE:
            return cp
        if cp == 0 or cp == 0xFFFD or in_ranges(CONTROL, _CONTROL_STARTS, cp):
            return None
        if self.strip_accents and in_ranges(MARK, _MARK_STARTS, cp):
            return None
        return _LOWER.get(cp, cp) if self.lowercase else cp


class LlamaCppBertNormalizer:
    """The characters of llama.cpp's WordPiece preprocessing (see
    :class:`wordsplit.spec.LlamaCppBertNormalizer`): each code point becomes at most one.

    >>> from wordsplit import spec
    >>> LlamaCppBertNormalizer(spec.LlamaCppBertNormalizer()).alignment("Ab\\u0301")
    ('ab', [(0, 1, False), (1, 2, True)])
    """

    def __init__(self, stage: spec.LlamaCppBertNormalizer) -> None:
        self.stage = stage
        self._table = _CharTable(stage.lowercase, stage.strip_accents)

    def __call__(self, text: str) -> str:
        return text.translate(self._table)

    def alignment(self, text: str) -> tuple[str, list[tuple[int, int, bool]]]:
        """The normalized text and each of its characters' place in ``text``: ``(start, end,
        same)``, ``same`` when it is that character unchanged."""
        table = self._table
        chars: list[str] = []
        places: list[tuple[int, int, bool]] = []
        for i, char in enumerate(text):
            cp = ord(char)
            out = table[cp]
            if out is not None:
                chars.append(chr(out))
                places.append((i, i + 1, out == cp))
        return "".join(chars), places


class LlamaCppUnigramNormalizer:
    """llama.cpp's normalizer of a Unigram vocabulary (see
    :class:`wordsplit.spec.LlamaCppUnigramNormalizer`): the character map, then the spaces.

    >>> from wordsplit import spec
    >>> LlamaCppUnigramNormalizer(spec.LlamaCppUnigramNormalizer(add_space_prefix=True))("  a b")
    '▁▁▁a▁b'
    """

    def __init__(self, stage: spec.LlamaCppUnigramNormalizer) -> None:
        self.stage = stage
        self.add_space_prefix = stage.add_space_prefix
        self.merge_spaces = stage.remove_extra_whitespaces
        self._map = charsmap_of(stage.charsmap) if stage.charsmap else None

    def _mapped(self, text: str) -> str:
        if self._map is None:
            return text
        return "".join(text[a:b] if out is None else out for a, b, out in spm_chunks(self._map, text))

    def __call__(self, text: str) -> str:
        mapped = self._mapped(text)
        if self.merge_spaces:
            # One ▁ before every run of characters that are not a space; the spaces dropped.
            return "".join(SPACE + run for run in mapped.split(" ") if run)
        spaced = mapped.replace(" ", SPACE)
        if self.add_space_prefix:
            first = len(mapped) - len(mapped.lstrip(" "))
            if first < len(mapped):
                return spaced[:first] + SPACE + spaced[first:]
        return spaced

    def alignment(self, text: str) -> tuple[str, list[tuple[int, int, bool]]]:
        """The normalized text and each of its characters' place in ``text``: ``(start, end,
        same)``; a character of the map's output is aligned to the text it replaced, an added
        ``▁`` to the character (or map key) it is put before.

        >>> from wordsplit import spec
        >>> LlamaCppUnigramNormalizer(spec.LlamaCppUnigramNormalizer(True, True)).alignment(" ab ")
        ('▁ab', [(1, 2, False), (1, 2, True), (2, 3, True)])
        """
        if self._map is None:
            chunks = [(i, i + 1, char, True) for i, char in enumerate(text)]
        else:
            chunks = []
            for start, end, out in spm_chunks(self._map, text):
                if out is None:
                    chunks.extend((i, i + 1, text[i], True) for i in range(start, end))
                else:
                    chunks.append((start, end, out, False))
        chars: list[str] = []
        places: list[tuple[int, int, bool]] = []
        in_word = prefixed = False
        for start, end, out, same in chunks:
            for char in out:
                if char != " ":
                    if not in_word:
                        in_word = True
                        if (self.add_space_prefix and not prefixed) or self.merge_spaces:
                            chars.append(SPACE)
                            places.append((start, end, False))
                            prefixed = True
                    chars.append(char)
                    places.append((start, end, same))
                else:
                    in_word = False
                    if not self.merge_spaces:
                        chars.append(SPACE)
                        places.append((start, end, False))
        return "".join(chars), places
