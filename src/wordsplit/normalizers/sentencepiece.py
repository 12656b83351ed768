"""SentencePiece's normalizer, and HF's Metaspace pre-tokenizer run as a normalizer: what runs
the stages :class:`wordsplit.spec.SentencePieceNormalizer` and :class:`wordsplit.spec.Metaspace`.

>>> from wordsplit import spec
>>> SentencePieceNormalizer(spec.SentencePieceNormalizer(remove_extra_whitespaces=False))("Hello  world")
'▁Hello▁▁world'
"""

from __future__ import annotations

import copy
import sys
from typing import Callable

from .. import spec
from ..errors import UnsupportedTokenizerError
from ..sentencepiece import SPACE
from .precompiled import charsmap_of, longest_rule, spm_chunks
from .unicode import WHITESPACE

__all__ = ["EVERY", "MetaspaceNormalizer", "SentencePieceNormalizer", "drops_start", "whitespace_words"]

#: :meth:`MetaspaceNormalizer.heads` of ``"always"``: every part and word gets the replacement.
EVERY = sys.maxsize


class SentencePieceNormalizer:
    """SentencePiece's ``Normalizer::Normalize``: the character map, then the spaces.

    In order, as ``normalizer.cc`` does it, over the text cut into chunks (each place the
    map's longest key matches is one chunk, its output; every other character is one chunk,
    itself: :func:`~wordsplit.normalizers.precompiled.spm_chunks`; with the identity
    map, every character): with ``remove_extra_whitespaces``, leading chunks that are exactly a
    space are dropped (text of such chunks only is empty), and each chunk loses its leading
    spaces after a chunk that ended with one; each space becomes ``▁`` with
    ``escape_whitespaces``; ``add_dummy_prefix`` puts one ``▁`` before non-empty text (after
    it, with ``treat_whitespace_as_suffix``); with ``remove_extra_whitespaces`` trailing ``▁``
    (typed ones too) are dropped before that. A model's user-defined pieces are matched first
    at each place (the longest one), each one chunk copied unmapped, as ``sentencepiece``'s
    ``PrefixMatcher`` does: a rule cannot change them, nor reach into one from before it.

    >>> from wordsplit import spec
    >>> SentencePieceNormalizer(spec.SentencePieceNormalizer())("  a   b  ")
    '▁a▁b'
    """

    def __init__(self, stage: spec.SentencePieceNormalizer) -> None:
        self.stage = stage
        self.add_dummy_prefix = stage.add_dummy_prefix
        self.remove_extra_whitespaces = stage.remove_extra_whitespaces
        self.escape_whitespaces = stage.escape_whitespaces
        self.suffix = stage.treat_whitespace_as_suffix
        self.space = SPACE if self.escape_whitespaces else " "
        self._map = None
        if stage.charsmap:
            self._map = charsmap_of(stage.charsmap)
        # The user-defined pieces by their first character, longest first.
        self._user_defined: dict[str, list[str]] = {}
        for piece in sorted(stage.user_defined, key=len, reverse=True):
            self._user_defined.setdefault(piece[0], []).append(piece)

    def __call__(self, text: str) -> str:
        return self.alignment(text)[0]

    def _chunks(self, text: str):
        """``(start, end, output, same)`` of each chunk: ``same`` when it is that text."""
        if self._user_defined:
            return self._chunks_with_user_defined(text)
        if self._map is None:
            return [(i, i + 1, char, True) for i, char in enumerate(text)]
        chunks = []
        for start, end, out in spm_chunks(self._map, text):
            if out is None:
                chunks.extend((i, i + 1, text[i], True) for i in range(start, end))
            else:
                chunks.append((start, end, out, False))
        return chunks

    def _chunks_with_user_defined(self, text: str):
        """:meth:`_chunks` one place at a time, as ``NormalizePrefix`` reads: the longest
        user-defined piece there, else the map's longest key, else the character."""
        chunks, at, size = [], 0, len(text)
        while at < size:
            piece = next((p for p in self._user_defined.get(text[at], ()) if text.startswith(p, at)), None)
            found = None if piece is not None or self._map is None else longest_rule(self._map, text, at)
            if piece is not None:
                chunks.append((at, at + len(piece), piece, True))
                at += len(piece)
            elif found is not None:
                chunks.append((at, *found, False))
                at = found[0]
            else:
                chunks.append((at, at + 1, text[at], True))
                at += 1
        return chunks

    def alignment(self, text: str) -> tuple[str, list[tuple[int, int, bool]]]:
        """The normalized text and each normalized character's place in ``text``: ``(start,
        end, same)``, ``same`` when it is that character unchanged (a chunk's output is aligned
        to the chunk); the dummy prefix is aligned to the first character kept (to the last with
        ``treat_whitespace_as_suffix``), as SentencePiece's ``norm_to_orig`` aligns it.

        >>> from wordsplit import spec
        >>> SentencePieceNormalizer(spec.SentencePieceNormalizer(remove_extra_whitespaces=False)).alignment("a b")
        ('▁a▁b', [(0, 1, False), (0, 1, True), (1, 2, False), (2, 3, True)])
        """
        chunks = self._chunks(text)
        first = 0
        if self.remove_extra_whitespaces:
            while first < len(chunks) and chunks[first][2] == " ":
                first += 1
        if first == len(chunks):
            return "", []
        space, escape, squeeze = self.space, self.escape_whitespaces, self.remove_extra_whitespaces
        chars: list[str] = []
        places: list[tuple[int, int, bool]] = []
        start = chunks[first][0]
        if self.add_dummy_prefix and not self.suffix:
            chars.append(space)
            places.append((start, start + 1, False))
        previous_space = squeeze
        for begin, end, out, same in chunks[first:]:
            skipped = 0
            if previous_space:
                skipped = len(out) - len(out.lstrip(" "))
                out = out[skipped:]
            if out:
                for k, char in enumerate(out):
                    # (a chunk that is its own text aligns character by character)
                    place = (begin + skipped + k, begin + skipped + k + 1) if same else (begin, end)
                    if char == " " and escape:
                        chars.append(SPACE)
                        places.append((*place, False))
                    else:
                        chars.append(char)
                        places.append((*place, same))
                previous_space = out.endswith(" ")
            if not squeeze:
                previous_space = False
        if squeeze:
            while chars and chars[-1] == space:
                chars.pop()
                places.pop()
        if self.add_dummy_prefix and self.suffix:
            end = places[-1][1] if places else len(text)
            chars.append(space)
            places.append((end - 1, end, False))
        return "".join(chars), places


class MetaspaceNormalizer:
    """HF's ``Metaspace`` pre-tokenizer with ``split: false`` (its one word is the whole stretch),
    after the file's normalizer: every space becomes the replacement, which is put before a
    stretch that does not start with it for ``prepend_scheme`` ``"always"``, and for ``"first"``
    only before the stretch at the start of the text, when its first character comes from the
    input's first (not after a normalizer that dropped it, :meth:`heads`; ``later`` is the
    normalizer of the other stretches: the engines use it for a stretch after an added token).
    With the stage's ``whitespace_split`` (HF's ``WhitespaceSplit`` before it), the words
    between runs of white space, each with the replacement before it unless it starts with one,
    joined (``"always"``); or, when the stage keeps the white space
    (:attr:`~wordsplit.spec.Metaspace.keeps_white_space`: ``"first"``, ``"never"``, HF's
    ``split: false``), the text with its white space (the spanner drops it), the replacement
    only where HF puts one: before every word for ``"always"``, before the words of the input's
    first character for ``"first"`` (:meth:`heads`), nowhere for ``"never"``.

    Args:
        stage: the Metaspace stage.
        before: the function that runs ``stage.before``.

    >>> from wordsplit import spec
    >>> first = MetaspaceNormalizer(spec.Metaspace(prepend_scheme="first"), lambda text: text)
    >>> first("Hello world"), first.later("Hello world"), first("▁x")
    ('▁Hello▁world', 'Hello▁world', '▁x')
    >>> strip = spec.Sequence((spec.Strip(left=True, right=True),))
    >>> from wordsplit.normalizers import normalizer_for
    >>> normalizer_for(spec.Metaspace(prepend_scheme="first", before=strip))("  a b")
    'a▁b'
    >>> MetaspaceNormalizer(spec.Metaspace(whitespace_split=True), lambda text: text)(" a\u3000 ▁b  c\t")
    '▁a▁b▁c'
    >>> words = MetaspaceNormalizer(spec.Metaspace(prepend_scheme="first", whitespace_split=True), lambda text: text)
    >>> words("a  b"), words(" a b"), words.later("a b")
    ('▁a  b', ' a b', 'a b')
    >>> kept = MetaspaceNormalizer(spec.Metaspace(whitespace_split=True, keep_white_space=True), str)
    >>> kept(" a▁b  c"), kept.alignment("a b")[1]
    (' ▁a▁b  ▁c', [(0, 1, False), (0, 1, True), (1, 2, True), (2, 3, False), (2, 3, True)])
    """

    def __init__(self, stage: spec.Metaspace, before: Callable[[str], str]) -> None:
        self.stage = stage
        self.replacement, self.scheme = stage.replacement, stage.prepend_scheme
        self.inner = before
        self.prepends = self.scheme != "never"
        self.keeps_white_space = stage.keeps_white_space
        # Whether the normalizer before may drop the input's first character (then its first
        # character may come from a later one: no replacement for "first", see `heads`).
        self.drops_start = drops_start(stage.before)
        if self.scheme == "first":
            # (the same stage without the prepend: a stage of "never" has no whitespace_split)
            self.later = copy.copy(self)
            self.later.prepends = False

    def __call__(self, text: str) -> str:
        if self.keeps_white_space:  # ("first", "never", split false, or a later stretch of "first")
            if not self.prepends:
                return self.inner(text)
            if self.scheme == "always":
                return self._part_words(self.inner(text), None, EVERY)[0]
            normalized, base = self._aligned_before(text)
            return self.part_alignment(normalized, base, self.heads(text, False, base))[0]
        if self.stage.whitespace_split:
            return "".join(word if word.startswith(self.replacement) else self.replacement + word
                           for word in whitespace_words(self.inner(text)))
        if self.prepends and self.scheme == "first" and self.drops_start:
            normalized, base = self._aligned_before(text)
            return self.part(normalized, self.heads(text, False, base))
        return self.part(self.inner(text), EVERY if self.prepends else 0)

    def _aligned_before(self, text: str):
        """The text of the normalizer before, and its alignment (None: a plug-in's text,
        unaligned, whose first character counts as the input's)."""
        try:
            normalized, base = self._before_alignment(text)
        except UnsupportedTokenizerError:
            return self.inner(text), None
        return normalized, [(i, i + 1, True) for i in range(len(normalized))] if base is None else base

    def heads(self, text: str, later: bool, base=None) -> int:
        """How many characters at the start of the text of the normalizer before Metaspace
        (of the stretch ``text``; ``base``: that text's alignment, when the caller has it) may
        get the replacement before them, in HF's second pass (:meth:`part`): HF's Metaspace
        prepends to a part between ``normalized`` added tokens (after ``WhitespaceSplit``, to a
        word) that starts in them. All for ``"always"``, none for ``"never"``; for ``"first"``
        those that come from the input's first character (HF's ``offsets_original()[0] ==
        0`` of the part, a slice of the normalized text: none when the normalizer dropped that
        character, such as ``Strip``'s white space; none in a ``later`` stretch, after a token).

        >>> from wordsplit import spec
        >>> first = MetaspaceNormalizer(spec.Metaspace(prepend_scheme="first"), str)
        >>> first.heads("ab", False), first.heads("ab", True), first.heads("a", False, [(1, 2, True)])
        (1, 0, 0)
        """
        if self.scheme == "always":
            return EVERY
        if self.scheme == "never" or later or not text:
            return 0
        if base is None:
            try:
                normalized, base = self._before_alignment(text)
            except UnsupportedTokenizerError:  # (a plug-in normalizer: its first character counts)
                return 1
            if base is None:
                return 1 if normalized else 0
        count = 0
        while count < len(base) and base[count][0] == 0:  # (places only grow)
            count += 1
        return count

    def part(self, normalized: str, heads: int) -> str:
        """Metaspace on ``normalized``, text the normalizer before it made (HF's pre-tokenizer on
        a part its second pass leaves between ``normalized`` added tokens): each space made the
        replacement, which is put before the part, if it does not start with it, when the part
        starts in its first ``heads`` characters (:meth:`heads`). With ``whitespace_split``
        (HF's ``WhitespaceSplit`` before Metaspace), the part's words instead, each given the
        replacement so: joined for ``"always"``, with the white space kept (the spanner drops
        it) when the stage keeps it.

        >>> from wordsplit import spec
        >>> MetaspaceNormalizer(spec.Metaspace(), str).part("a b", EVERY)
        '▁a▁b'
        >>> MetaspaceNormalizer(spec.Metaspace(prepend_scheme="first", whitespace_split=True), str).part("a b", 1)
        '▁a b'
        """
        if self.keeps_white_space:
            return self._part_words(normalized, None, heads)[0]
        if self.stage.whitespace_split:  # ("always", heads: every word)
            return "".join(word if word.startswith(self.replacement) else self.replacement + word
                           for word in whitespace_words(normalized))
        text = normalized.replace(" ", self.replacement)
        if heads > 0 and text and not text.startswith(self.replacement):
            text = self.replacement + text
        return text

    def alignment(self, text: str) -> tuple[str, list[tuple[int, int, bool]]]:
        """The normalized text and each character's place in ``text``: the normalizer before
        Metaspace aligned as it aligns (a program step by step, a Unicode form by HF's
        changes), then each ``▁`` from a space aligned to it and the prepended one to the first
        character, as HF's ``prepend`` aligns it.

        Raises:
            UnsupportedTokenizerError: a plug-in normalizer before Metaspace that changes the text
                (it gives no alignment).

        >>> from wordsplit import spec
        >>> from wordsplit.normalizers import normalizer_for
        >>> normalizer_for(spec.Metaspace(before=spec.Sequence((spec.Lowercase(),)))).alignment("A b")
        ('▁a▁b', [(0, 1, False), (0, 1, False), (1, 2, False), (2, 3, True)])
        """
        normalized, base = self._before_alignment(text)
        if not normalized:
            return "", []
        if base is None:
            base = [(i, i + 1, True) for i in range(len(normalized))]
        if self.keeps_white_space:
            return self._part_words(normalized, base, self.heads(text, False, base) if self.prepends else 0)
        if self.stage.whitespace_split:
            return self._words_alignment(normalized, base)
        heads = EVERY if self.prepends else 0
        if self.prepends and self.scheme == "first" and self.drops_start:
            heads = self.heads(text, False, base)
        return self.part_alignment(normalized, base, heads)

    def part_alignment(self, normalized: str, base: list[tuple[int, int, bool]] | None,
                       heads: int) -> tuple[str, list[tuple[int, int, bool]]]:
        """:meth:`part` of ``normalized`` (aligned by ``base``; None: not needed) and its
        alignment: the replacement of a space aligned to it, a prepended one to the first
        character of its part or word (HF's ``prepend``)."""
        if not normalized:
            return "", []
        if base is None:
            base = [(i, i + 1, True) for i in range(len(normalized))]
        if self.stage.whitespace_split:
            return self._part_words(normalized, base, heads)
        chars = [self.replacement if c == " " else c for c in normalized]
        places = [(start, end, same and c != " ") for (start, end, same), c in zip(base, normalized)]
        if heads > 0 and chars[0] != self.replacement:
            chars.insert(0, self.replacement)
            places.insert(0, (places[0][0], places[0][1], False))
        return "".join(chars), places

    def before_alignment(self, text: str) -> tuple[str, list[tuple[int, int, bool]]]:
        """The text of the normalizer before Metaspace, each character aligned to ``text``.

        Raises:
            UnsupportedTokenizerError: a plug-in normalizer that changes the text (it gives no
                alignment).
        """
        normalized, base = self._before_alignment(text)
        return normalized, [(i, i + 1, True) for i in range(len(normalized))] if base is None else base

    def _part_words(self, normalized: str, base: list | None,
                    heads: int) -> tuple[str, list[tuple[int, int, bool]]]:
        """:meth:`part_alignment` after ``WhitespaceSplit``: each word that starts in the first
        ``heads`` characters and not with the replacement gets one, aligned to its first
        character (``base``: the alignment of ``normalized``; None: not needed, the places
        given are then those of ``normalized`` itself); the white space is dropped for
        ``"always"`` (the spanner cuts before each replacement), kept when the stage keeps it
        (its spanner drops it)."""
        if base is None:
            base = [(i, i + 1, True) for i in range(len(normalized))]
        if not self.keeps_white_space:
            return self._words_alignment(normalized, base, heads)
        replacement = self.replacement
        chars: list[str] = []
        places: list[tuple[int, int, bool]] = []
        in_word, done = False, 0
        for i, c in enumerate(normalized):
            if i >= heads:  # (no later word gets one: copy the rest at once)
                done = i
                break
            if c in _WHITESPACE:
                in_word = False
            elif not in_word:
                in_word = True
                if c != replacement:
                    chars.append(replacement)
                    places.append((base[i][0], base[i][1], False))
            chars.append(c)
            places.append(base[i])
        else:
            done = len(normalized)
        if done < len(normalized):
            chars.append(normalized[done:])
            places.extend(base[done:])
        return "".join(chars), places

    def _words_alignment(self, normalized: str, base: list,
                         heads: int = EVERY) -> tuple[str, list[tuple[int, int, bool]]]:
        """The words of ``normalized`` (aligned by ``base``) as :meth:`__call__` joins them, a
        prepended replacement aligned to its word's first character (HF's ``prepend``)."""
        chars: list[str] = []
        places: list[tuple[int, int, bool]] = []
        at = 0
        for word in whitespace_words(normalized):
            at = normalized.index(word, at)
            if at < heads and not word.startswith(self.replacement):
                chars.append(self.replacement)
                places.append((base[at][0], base[at][1], False))
            chars.extend(word)
            places.extend(base[at:at + len(word)])
            at += len(word)
        return "".join(chars), places

    def _before_alignment(self, text: str):
        from ..offsets import stage_alignment

        return stage_alignment(self.inner, self.stage.before, text, self._unaligned)

    def _unaligned(self, text: str):
        """A plug-in normalizer before Metaspace, which gives no alignment: its text when it
        leaves ``text`` as it is (None: each character in its place)."""
        if self.inner(text) != text:
            raise UnsupportedTokenizerError(
                f"offsets through a normalizer ({self.stage.before.kind}) before Metaspace that gives no alignment are "
                "not supported"
            )
        return text, None


def drops_start(stage: spec.Stage) -> bool:
    """Whether the normalizer ``stage`` may leave the input's first character out of its text's
    first character (HF's alignment of it then starts past 0): ``Strip`` on the left, a
    ``Replace`` by nothing (or of a regex), ``StripAccents``, ``BertNormalizer``'s cleaning or
    accents, a plug-in. Not Unicode forms, ``Lowercase``, ``Prepend``, nor a precompiled map: HF's
    ``Precompiled`` aligns a first character it drops (T5's U+200B) to the next one's.

    >>> drops_start(spec.Sequence((spec.Nfkc(), spec.Replace(pattern=" ", content="▁"))))
    False
    >>> drops_start(spec.Sequence((spec.Strip(left=True, right=False), spec.Nfkc())))
    True
    """
    if isinstance(stage, spec.Sequence):
        return any(drops_start(step) for step in stage.normalizers)
    if isinstance(stage, (spec.NoNormalizer, spec.Nfc, spec.Nfd, spec.Nfkc, spec.Nfkd, spec.Lowercase, spec.Prepend,
                          spec.PrefixSpace, spec.Precompiled)):
        return False
    if isinstance(stage, spec.Strip):
        return stage.left
    if isinstance(stage, spec.Replace):
        return stage.regex or not stage.content
    if isinstance(stage, spec.BertNormalizer):
        return stage.clean_text or stage.strip_accents
    return True


def whitespace_words(text: str) -> list[str]:
    r"""HF's ``WhitespaceSplit``: the words of ``text`` between runs of white space (Rust's
    ``char::is_whitespace``, :data:`~wordsplit.normalizers.unicode.WHITESPACE`), which are dropped.

    >>> whitespace_words("\u3000a b\x85\x1cc ")
    ['a', 'b', '\x1cc']
    """
    words, start = [], None
    for i, c in enumerate(text):
        if c in _WHITESPACE:
            if start is not None:
                words.append(text[start:i])
                start = None
        elif start is None:
            start = i
    if start is not None:
        words.append(text[start:])
    return words


_WHITESPACE = frozenset(WHITESPACE)
