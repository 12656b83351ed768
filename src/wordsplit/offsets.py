r"""Offsets: where each token of an encode came from in the text.

:meth:`Tokenizer.encode_with_offsets <wordsplit.Tokenizer.encode_with_offsets>` returns a
:class:`TokenOffsets`: the ids, and for each token its ``(start, end)`` in the UTF-8 bytes of
the text (``byte_offsets``), in its characters (``char_offsets``, indexes into the ``str``
given) and the index of its piece (``word_ids``). The rules, the same on both backends:

* Where the normalizer left the text as it was (always for OpenAI vocabularies; for Qwen3's
  NFC, all text that is already NFC), a token's byte range is exactly its bytes in the text, and
  its char range the characters those bytes touch. A token that holds only part of a character
  (byte-level BPE splits some emoji and CJK characters over tokens) gets that whole character,
  as HF tokenizers reports it: the last two tokens of "hi 🦀" below both have (3, 4).
* Where the normalizer changed the text, each normalized character is aligned to original
  characters as HF tokenizers aligns it (for NFC, "e" + U+0301 composed into "é" is aligned to
  the "e" alone, so the combining mark is in no token's range; a normalizer program carries
  the alignment through each of its steps, :func:`program_alignment`); a token gets the span
  from its first character's start to its last character's end, in bytes and in characters.
* A special or added token gets the range of its literal, and is a word of its own.
* Text a spanner drops (see :mod:`wordsplit.spanners`) is in no token's range and no word; a
  prefix it puts before a piece is aligned to the piece's first character, as HF aligns the
  space ByteLevel's ``add_prefix_space`` prepends.

What this module holds: the result class and the reference (Python) alignments the Python
engine uses; the native engine computes the same in ``crates/wordsplit/src/pipeline/offsets/``.

>>> from wordsplit import get_tokenizer
>>> tok = get_tokenizer("cl100k_base")
>>> result = tok.encode_with_offsets("hi 🦀")
>>> result.ids
[6151, 11410, 99, 222]
>>> result.byte_offsets
[(0, 2), (2, 5), (5, 6), (6, 7)]
>>> result.char_offsets
[(0, 2), (2, 4), (3, 4), (3, 4)]
"""

from __future__ import annotations

from array import array
from typing import Callable, Iterator, Optional, Sequence

from .normalizers.unicode import unicode_changes

__all__ = ["TokenOffsets", "form_alignment", "nfc_alignment", "prefix_suffix_alignment", "program_alignment",
           "spans_alignment", "stage_alignment"]

# One aligned normalized character: (original char start, original char end, identical), the
# char range relative to the segment; `identical` when it is that original character itself.
Aligned = tuple[int, int, bool]


class TokenOffsets:
    """The ids of one encode and where each token came from; see :mod:`wordsplit.offsets`.

    Attributes:
        ids: the token ids, as ``encode`` gives them.
        byte_offsets: ``(start, end)`` per token in the UTF-8 bytes of the text (surrogates
            encoded as ``encode`` takes them: a lone one as U+FFFD, a pair as its character).
        char_offsets: ``(start, end)`` per token in the characters of the ``str`` given.
        word_ids: per token, the index of its piece (the spanner's pieces and the special or
            added tokens, counted in order over the text), as HF's ``word_ids``.

    The offset lists are made on first use from a compact buffer.

    >>> from wordsplit import get_tokenizer
    >>> r = get_tokenizer("qwen3").encode_with_offsets("hello world")
    >>> len(r), r.char_offsets, r.word_ids
    (2, [(0, 5), (5, 11)], [0, 1])
    """

    __slots__ = ("ids", "_places", "_char_map", "_byte_offsets", "_char_offsets", "_word_ids")

    def __init__(self, ids: list[int], places: Sequence[int], char_map: Optional[list[int]] = None) -> None:
        self.ids = ids
        self._places = places  # 5 ints per token: byte start, byte end, char start, char end, word
        self._char_map = char_map
        self._byte_offsets: Optional[list[tuple[int, int]]] = None
        self._char_offsets: Optional[list[tuple[int, int]]] = None
        self._word_ids: Optional[list[int]] = None

    def _pairs(self, field: int) -> list[tuple[int, int]]:
        places = self._places
        pairs = getattr(places, "pairs", None)
        if pairs is not None:  # the native engine's buffer: the tuples made in one native call
            return pairs(field)
        return list(zip(places[field::5], places[field + 1::5]))

    @property
    def byte_offsets(self) -> list[tuple[int, int]]:
        if self._byte_offsets is None:
            self._byte_offsets = self._pairs(0)
        return self._byte_offsets

    @property
    def char_offsets(self) -> list[tuple[int, int]]:
        if self._char_offsets is None:
            pairs, char_map = self._pairs(2), self._char_map
            self._char_offsets = pairs if char_map is None else [(char_map[s], char_map[e]) for s, e in pairs]
        return self._char_offsets

    @property
    def word_ids(self) -> list[int]:
        if self._word_ids is None:
            self._word_ids = list(self._places[4::5])
        return self._word_ids

    def __len__(self) -> int:
        return len(self.ids)

    def __iter__(self) -> Iterator[tuple[int, tuple[int, int]]]:
        """``(id, char offsets)`` per token."""
        return iter(zip(self.ids, self.char_offsets))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TokenOffsets):
            return NotImplemented
        return (self.ids, self.byte_offsets, self.char_offsets, self.word_ids) == (
            other.ids, other.byte_offsets, other.char_offsets, other.word_ids)

    __hash__ = None  # type: ignore[assignment]  # mutable lists inside

    def __repr__(self) -> str:
        shown = ", ".join(f"{i}@{s}:{e}" for i, (s, e) in zip(self.ids[:8], self.char_offsets[:8]))
        more = ", ..." if len(self.ids) > 8 else ""
        return f"TokenOffsets([{shown}{more}])"


def surrogate_char_map(text: str) -> Optional[list[int]]:
    r"""For a ``str`` with surrogate pairs: each char index of the text as encode sees it (each
    pair joined into its character) → the index in ``text``, plus the end; else None.

    >>> surrogate_char_map("a\ud83d\ude00b")
    [0, 1, 3, 4]
    >>> surrogate_char_map("a\ud83db") is None  # a lone surrogate stays one character
    True
    """
    mapping, i, n, joined = [], 0, len(text), False
    while i < n:
        mapping.append(i)
        if "\ud800" <= text[i] <= "\udbff" and i + 1 < n and "\udc00" <= text[i + 1] <= "\udfff":
            i += 2
            joined = True
        else:
            i += 1
    mapping.append(n)
    return mapping if joined else None


# -- alignments (the reference for crates/wordsplit/src/pipeline/offsets/) ------------------------------


def nfc_changes(text: str) -> list[tuple[str, int]]:
    r"""HF's NFC of ``text`` with the crate's changes: :func:`unicode_changes` for NFC.

    >>> nfc_changes("e\u0301x")
    [('é', -1), ('x', 0)]
    """
    return unicode_changes(text, "NFC")


def apply_changes(alignment: Sequence[Aligned], text: str, changes: Sequence[tuple[str, int]],
                  initial_offset: int = 0, original_length: int = 0) -> list[Aligned]:
    r"""HF's ``NormalizedString::transform`` on ``text`` whose characters are aligned by
    ``alignment``: the alignment of the text ``changes`` make of it. A replacing character (change
    0 or -n) takes the alignment of the character of ``text`` it replaces, an inserted one (+1)
    that of the character before it (the empty start, at the very start); ``initial_offset``
    characters of ``text`` are removed before the first change. Past the end of ``text`` (which
    HF never reaches) a character is aligned to the empty end, ``original_length``.

    >>> apply_changes([(0, 1, True), (1, 2, True)], "ab", [("a", 0), ("x", 1), ("B", 0)])
    [(0, 1, True), (0, 1, False), (1, 2, False)]
    """
    out: list[Aligned] = []
    offset, count = initial_offset, len(alignment)
    for ch, change in changes:
        if change > 0:
            if offset == 0:
                out.append((0, 0, False))
            else:
                start, end, _ = alignment[min(offset, count) - 1]
                out.append((start, end, False))
        else:
            if offset < count:
                start, end, same = alignment[offset]
                out.append((start, end, same and change == 0 and text[offset] == ch))
            else:
                out.append((original_length, original_length, False))
            offset += 1 - change
    return out


def _identity(length: int) -> list[Aligned]:
    return [(i, i + 1, True) for i in range(length)]


def form_alignment(text: str, form: str = "NFC") -> tuple[str, Optional[list[Aligned]]]:
    r"""HF's ``form`` (NFC, NFD, NFKC or NFKD) of ``text`` and HF's alignment of each normalized
    character (None when the form leaves the text as it is): a replacing character gets the
    original character it replaces, an inserted one the original character before it (nothing
    at the very start).

    >>> form_alignment("xe\u0301")
    ('xé', [(0, 1, True), (1, 2, False)])
    >>> form_alignment("\ufb01!", "NFKC")
    ('fi!', [(0, 1, False), (0, 1, False), (1, 2, True)])
    """
    from .normalizers import get_normalizer

    if get_normalizer(form.lower())(text) == text:
        return text, None
    changes = unicode_changes(text, form)
    normalized = "".join(ch for ch, _ in changes)
    if normalized == text:
        return text, None
    return normalized, apply_changes(_identity(len(text)), text, changes, 0, len(text))


def stage_alignment(normalize: Callable[[str], str], stage, text: str,
                    unaligned: Callable[[str], tuple[str, Optional[list[Aligned]]]]) \
        -> tuple[str, Optional[list[Aligned]]]:
    r"""``text`` normalized by ``normalize`` (the normalizer of the stage ``stage``) and each
    normalized character's place in ``text`` (None: the text is ``text``, each character in its
    place): none for no normalizer, the normalizer's own ``alignment`` when it has one, HF's
    changes for a Unicode form (:func:`form_alignment`), else ``unaligned(text)`` (a plug-in's
    normalizer gives no alignment: a caller refuses it, or takes it when it leaves the text as
    it is).

    >>> from wordsplit import spec
    >>> from wordsplit.normalizers import normalizer_for
    >>> stage_alignment(normalizer_for(spec.Nfkc()), spec.Nfkc(), "\ufb01", None)
    ('fi', [(0, 1, False), (0, 1, False)])
    >>> stage_alignment(str, spec.NoNormalizer(), "ab", None)
    ('ab', None)
    """
    from .spec import Nfc, Nfd, Nfkc, Nfkd, NoNormalizer

    if isinstance(stage, NoNormalizer):
        return text, None
    alignment = getattr(normalize, "alignment", None)
    if alignment is not None:
        return alignment(text)
    if isinstance(stage, (Nfc, Nfd, Nfkc, Nfkd)):
        return form_alignment(text, stage.kind)
    return unaligned(text)


def nfc_alignment(text: str) -> tuple[str, Optional[list[Aligned]]]:
    r"""HF's NFC of ``text`` and its alignment: :func:`form_alignment` for NFC.

    >>> nfc_alignment("xe\u0301")
    ('xé', [(0, 1, True), (1, 2, False)])
    """
    return form_alignment(text, "NFC")


def program_alignment(program, text: str) -> tuple[str, Optional[list[Aligned]]]:
    r"""The text a normalizer program (:class:`~wordsplit.normalizers.ProgramNormalizer`) makes
    of ``text``, and each of its characters' alignment to ``text`` (None when it is ``text``,
    each character itself), carried through every step as HF's ``NormalizedString`` carries it:

    * NFC, NFD, NFKC, NFKD: the crate's changes (:func:`unicode_changes`);
    * ``Lowercase``: each character's first lowercase character replaces it, the others (İ's
      U+0307) are inserted after it, so aligned to it;
    * ``Strip``, ``StripAccents``: the kept characters keep their alignment;
    * ``Replace``: text outside the matches keeps its alignment; every character of ``content``
      is inserted, so aligned to the last character of its match (an empty match: to the
      character before it; the program refuses one at the very start, where HF has no answer);
    * ``Prepend``, ``PrefixSpace``: the new text is aligned to the first character;
    * ``BertNormalizer``: as :func:`~wordsplit.normalizers.bert.bert_alignment` carries it;
    * ``Precompiled``: HF's transformations of its character map
      (:func:`~wordsplit.normalizers.precompiled.hf_changes`).

    >>> from wordsplit.normalizers import ProgramNormalizer
    >>> from wordsplit.spec import Nfc, PrefixSpace, Sequence
    >>> program = ProgramNormalizer(Sequence((Nfc(), PrefixSpace())))
    >>> program_alignment(program, "e\u0301 a\u0301")
    (' é á', [(0, 1, False), (0, 1, False), (2, 3, True), (3, 4, False)])
    """
    normalized, head, tail = program_alignment_parts(program, text)
    if head is None:
        return normalized, None
    return normalized, head + [(i, i + 1, True) for i in range(len(text) - tail, len(text))]


def program_alignment_parts(program, text: str) -> tuple[str, Optional[list[Aligned]], int]:
    r""":func:`program_alignment` in parts, as the native engine takes it: the normalized text,
    the alignment of its first characters (None when it is ``text``, each character itself), and
    how many of ``text``'s last characters follow, each itself. Text put before the whole text
    (``Prepend``, ``PrefixSpace``) leaves the rest to follow as it is, so the common programs
    that only add a prefix space give a short head.

    >>> from wordsplit.normalizers import ProgramNormalizer
    >>> from wordsplit.spec import PrefixSpace, Sequence
    >>> program_alignment_parts(ProgramNormalizer(Sequence((PrefixSpace(),))), "abc")
    (' abc', [(0, 1, False)], 3)
    """
    from .normalizers.unicode import WHITESPACE, _data, lowercase

    length = len(text)
    # The alignment is `head` followed by the last `tail` characters of `text`, each itself.
    head: list[Aligned] = []
    tail = length
    current = text
    for step, function, matcher in zip(program.steps, program._functions, program._matchers):
        kind = step.kind
        matches = matcher(current) if kind == "Replace" else None
        normalized = function(current)
        if (normalized == current and not matches) or (kind == "Replace" and not matches):
            continue
        if kind in ("Prepend", "PrefixSpace"):  # new text before the whole (non-empty) text
            start, end, _ = head[0] if head else (length - tail, length - tail + 1, True)
            head = [(start, end, False)] * (len(normalized) - len(current)) + head
            current = normalized
            continue
        base = head + [(i, i + 1, True) for i in range(length - tail, length)]
        tail = 0
        if kind == "Replace":
            content = step.content
            head, done = [], 0
            for start, end in matches:
                head.extend(base[done:start])
                start_, end_, _ = base[end - 1] if end else (0, 0, False)
                head.extend([(start_, end_, False)] * len(content))
                done = end
            head.extend(base[done:])
        elif kind in _FORMS:
            head = apply_changes(base, current, unicode_changes(current, kind), 0, length)
        elif kind == "Lowercase":
            head = []
            for ch, (start, end, same) in zip(current, base):
                lower = lowercase(ch)
                head.append((start, end, same and lower == ch))
                head.extend([(start, end, False)] * (len(lower) - 1))
        elif kind == "BertNormalizer":
            from .normalizers.bert import bert_alignment

            _, head = bert_alignment(step, current, base, length)
        elif kind == "Precompiled":
            from .normalizers.precompiled import charsmap_of, hf_changes

            head = apply_changes(base, current, hf_changes(charsmap_of(step.charsmap), current), 0, length)
        elif kind == "Strip":
            left = len(current) - len(current.lstrip(WHITESPACE)) if step.left else 0
            right = len(current) - len(current.rstrip(WHITESPACE)) if step.right else 0
            head = base[left:len(current) - right]
        else:  # StripAccents
            marks = _data().no_marks
            head = [aligned for ch, aligned in zip(current, base) if ord(ch) not in marks]
        current = normalized
    if tail == length and not head:
        return current, None, 0
    if current == text and head == _identity(length - tail):
        return current, None, 0
    return current, head, tail


_FORMS = ("NFC", "NFD", "NFKC", "NFKD")


def prefix_suffix_alignment(text: str, normalized: str) -> list[Aligned]:
    """The alignment of a normalizer that gives none of its own (a plug-in): the characters of the common
    prefix and suffix are themselves; every other normalized character maps to the whole
    changed middle of ``text``. Text put before the whole of ``text`` (HF's ``Prepend``,
    ByteLevel's ``add_prefix_space``) is aligned to its first character, as HF's
    ``NormalizedString::prepend`` aligns it.

    >>> prefix_suffix_alignment("aXYb", "aZb")
    [(0, 1, True), (1, 3, False), (3, 4, True)]
    >>> prefix_suffix_alignment("ab", " ab")
    [(0, 1, False), (0, 1, True), (1, 2, True)]
    """
    if len(normalized) > len(text) > 0 and normalized.endswith(text):
        return [(0, 1, False)] * (len(normalized) - len(text)) + [(i, i + 1, True) for i in range(len(text))]
    prefix = 0
    for a, b in zip(text, normalized):
        if a != b:
            break
        prefix += 1
    room = min(len(text), len(normalized)) - prefix
    suffix = 0
    while suffix < room and text[-1 - suffix] == normalized[-1 - suffix]:
        suffix += 1
    shift = len(text) - len(normalized)
    middle = (prefix, len(text) - suffix, False)
    return [
        (i, i + 1, True) if i < prefix
        else (i + shift, i + shift + 1, True) if i >= len(normalized) - suffix
        else middle
        for i in range(len(normalized))
    ]


def spans_alignment(normalized: str, spans: list[tuple[int, int, str]], alignment: Optional[list[Aligned]],
                    segment_length: int) -> list[Aligned]:
    r"""The alignment of the text a text-dropping spanner's spans make of ``normalized`` (each
    span's prefix and text, in order), through the normalizer's ``alignment`` of it (None: it
    is the segment itself, of ``segment_length`` characters).

    A character from the text keeps its alignment; a prefix character is aligned, not
    identical, to the character at its span's start, as HF aligns a prepended character
    (``NormalizedString::prepend``), or to the empty end of the segment after the last one.

    >>> spans_alignment("ab  c", [(0, 2, " "), (4, 5, " ")], None, 5)
    [(0, 1, False), (0, 1, True), (1, 2, True), (4, 5, False), (4, 5, True)]
    """
    base = alignment if alignment is not None else [(i, i + 1, True) for i in range(len(normalized))]
    out: list[Aligned] = []
    for start, end, prefix in spans:
        if prefix:
            first_start, first_end, _ = base[start] if start < len(base) else (segment_length, segment_length, False)
            out.extend([(first_start, first_end, False)] * len(prefix))
        out.extend(base[start:end])
    return out


def narrow_to_alignment(segment: str, alignment: list[Aligned]) -> tuple[int, str, list[Aligned]]:
    """``(skipped, narrowed, shifted)``: the part of ``segment`` that ``alignment`` aligns to
    (from its least start to its greatest end), the count of characters of ``segment`` before
    it, and the alignment relative to it.

    >>> narrow_to_alignment("abcdef", [(2, 3, True), (3, 5, False)])
    (2, 'cde', [(0, 1, True), (1, 3, False)])
    """
    if not alignment:
        return 0, "", []
    low = min(start for start, _, _ in alignment)
    high = max(end for _, end, _ in alignment)
    return low, segment[low:high], [(start - low, end - low, same) for start, end, same in alignment]


def place_tokens(out: array, ids: list[int], ends: list[int], token_bytes, segment: str, normalized: str,
                 alignment: Optional[list[Aligned]], byte_base: int, char_base: int, word: int,
                 untiled: Callable[[bytes], Exception], missing_bytes: frozenset[int] = frozenset(),
                 unk: Optional[tuple[int, bool]] = None, lengths: Optional[list[int]] = None,
                 spans: Optional[list[tuple[int, int, int]]] = None) -> None:
    """Append the places (5 ints per token, see :class:`TokenOffsets`) of the tokens ``ids`` of
    one plain segment, whose normalized text's pieces end at the UTF-8 byte positions ``ends``.
    The ids of a piece must spell its bytes (``untiled(piece)`` is raised otherwise, for the
    first piece whose ids do not). ``missing_bytes``: the bytes the vocabulary has no token for,
    which encoding dropped from the pieces: they are in no token's range (skipped before a token,
    or inside one between its bytes). ``unk``: ``(id, fuse)`` when such bytes are the unk token
    instead: an unk token at such a byte spans it (and the run of them, with ``fuse``), as HF's
    BPE gives it the byte's range. ``lengths``: each token's length in bytes, when tokens do not
    spell their text (a word model's), instead of its bytes' length. ``spans``: each token's
    ``(piece, start, end)``, bytes of that piece, when the encoder says where each is (HF's BPE
    over characters, whose spans need not tile the piece), instead of a walk over lengths."""
    data = normalized.encode("utf-8")
    # Byte start of each original character (and the end), relative to the segment.
    original_starts = [0]
    for ch in segment:
        original_starts.append(original_starts[-1] + len(ch.encode("utf-8")))
    if alignment is None:
        alignment = [(i, i + 1, True) for i in range(len(segment))]
    # The normalized character of each normalized byte, and each character's byte start.
    char_of_byte: list[int] = []
    normalized_starts: list[int] = []
    for k, ch in enumerate(normalized):
        normalized_starts.append(len(char_of_byte))
        char_of_byte.extend([k] * len(ch.encode("utf-8")))

    def piece(index: int) -> bytes:
        return data[ends[index - 1] if index else 0:ends[index] if index < len(ends) else len(data)]

    def skip_missing() -> None:
        nonlocal position, index
        while index < len(ends):
            while position < ends[index] and data[position] in missing_bytes:
                position += 1
            if position != ends[index]:
                return
            index += 1

    def put(a: int, b: int, index: int) -> None:
        """The place of the token at normalized bytes ``a:b`` of piece ``index``."""
        first, last = char_of_byte[a], char_of_byte[b - 1]
        f_start, _, f_same = alignment[first]
        l_start, l_end, l_same = alignment[last]
        byte_start = original_starts[f_start] + (a - normalized_starts[first] if f_same else 0)
        byte_end = original_starts[l_start] + (b - normalized_starts[last]) if l_same else original_starts[l_end]
        out.extend((byte_base + byte_start, byte_base + byte_end, char_base + f_start, char_base + l_end,
                    word + index))

    if spans is not None:
        if len(spans) != len(ids):
            raise untiled(piece(0))
        for index, a, b in spans:
            base = ends[index - 1] if index else 0
            if not 0 <= a < b <= (ends[index] if index < len(ends) else -1) - base:
                raise untiled(piece(index))
            put(base + a, base + b, index)
        return
    unk_id, fuse = unk if unk is not None else (None, False)
    dropped = bool(missing_bytes) and unk is None
    position = index = 0
    for k, token in enumerate(ids):
        length = lengths[k] if lengths is not None else len(token_bytes[token] or b"")
        if dropped:
            skip_missing()
        a, b = position, position + length
        if token == unk_id and index < len(ends) and position < ends[index] and data[position] in missing_bytes:
            b = a + 1  # the unknown byte, or the run of them a fused unk token stands for
            while fuse and b < ends[index] and data[b] in missing_bytes:
                b += 1
            length = b - a
        elif dropped and index < len(ends):
            b, count = a, 0  # the token's bytes, with the missing bytes between them
            while count < length and b < ends[index]:
                count += data[b] not in missing_bytes
                b += 1
            if count < length:
                b = ends[index] + 1  # does not tile: the error below
        if length == 0 or index >= len(ends) or b > ends[index]:
            raise untiled(piece(index))
        put(a, b, index)
        position = b
        if position == ends[index]:
            index += 1
    if dropped:
        skip_missing()
    if index != len(ends):
        raise untiled(piece(index))
