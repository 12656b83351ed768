"""HF tokenizers' ``Encoding`` in Python, with HF's truncation (stride, overflowing parts) and
padding: what :class:`~wordsplit.compat.transformers.backend.Backend` returns where transformers
reads an encoding.

>>> enc = Encoding([5, 6], ["a", "b"], [(0, 1), (1, 2)], [0, 1])
>>> enc.pad(3, direction="left", pad_id=9)
>>> enc.ids, enc.special_tokens_mask
([9, 5, 6], [1, 0, 0])
"""

from __future__ import annotations

from typing import Optional

from ...errors import UnsupportedTokenizerError
from ...postprocess import Parts

__all__ = ["Encoding", "pad_encodings", "round_up"]


class Encoding:
    """HF tokenizers' ``Encoding``, field for field: what :meth:`Backend.encode_batch` returns.

    The fields are HF's, and so are the operations (:meth:`truncate` with stride and
    overflowing parts, :meth:`pad`, and the char/word/token maps transformers'
    ``BatchEncoding`` asks), including HF's ``sequence_ranges``: a map of each sequence to its
    tokens, empty for a single text the post-processor did not number.

    >>> enc = Encoding([5, 6, 7], ["a", "b", "c"], [(0, 1), (1, 2), (2, 3)], [0, 1, 2])
    >>> enc.truncate(2, stride=1)
    >>> enc.ids, [o.ids for o in enc.overflowing]
    ([5, 6], [[6, 7]])
    >>> enc.pad(4, pad_id=0, pad_token="<pad>", direction="left")
    >>> enc.ids, enc.attention_mask, enc.char_to_token(1)
    ([0, 0, 5, 6], [0, 0, 1, 1], 3)
    """

    __slots__ = ("ids", "tokens", "offsets", "word_ids", "type_ids", "special_tokens_mask", "attention_mask",
                 "overflowing", "sequence_ranges")

    def __init__(self, ids, tokens, offsets, word_ids, type_ids=None, special_tokens_mask=None, attention_mask=None,
                 overflowing=None, sequence_ranges=None) -> None:
        n = len(ids)
        self.ids = list(ids)
        self.tokens = list(tokens)
        self.offsets = list(offsets)
        self.word_ids = list(word_ids)
        self.type_ids = [0] * n if type_ids is None else list(type_ids)
        self.special_tokens_mask = [0] * n if special_tokens_mask is None else list(special_tokens_mask)
        self.attention_mask = [1] * n if attention_mask is None else list(attention_mask)
        self.overflowing: list[Encoding] = [] if overflowing is None else overflowing
        #: sequence id -> (start, stop) of its tokens; empty: one sequence covering everything.
        self.sequence_ranges: dict[int, tuple[int, int]] = {} if sequence_ranges is None else sequence_ranges

    @classmethod
    def from_parts(cls, parts: Parts, *, numbered: bool = True) -> "Encoding":
        """The encoding of post-processed :class:`~wordsplit.postprocess.Parts`; ``numbered``:
        the post-processor set the sequence ids (HF leaves a single text without a
        post-processor unnumbered)."""
        ranges: dict[int, tuple[int, int]] = {}
        if numbered:
            for sequence in sorted(parts.sequences):
                where = [i for i, s in enumerate(parts.sequence_ids) if s == sequence]
                ranges[sequence] = (where[0], where[-1] + 1) if where else (0, 0)
        return cls(parts.ids, parts.tokens, parts.offsets, parts.word_ids, parts.type_ids,
                   parts.special_tokens_mask, parts.attention_mask, [], ranges)

    def to_parts(self) -> Parts:
        """The fields as :class:`~wordsplit.postprocess.Parts`, for a post-processor."""
        return Parts(list(self.ids), list(self.tokens), list(self.offsets), list(self.word_ids), list(self.type_ids),
                     list(self.special_tokens_mask), list(self.attention_mask), [0] * len(self.ids), {0})

    # -- HF's read API ----------------------------------------------------------------------

    words = property(lambda self: self.word_ids, doc="HF's deprecated name of :attr:`word_ids`.")

    @property
    def n_sequences(self) -> int:
        return len(self.sequence_ranges) or 1

    def _range(self, sequence: int) -> tuple[int, int]:
        return self.sequence_ranges.get(sequence, (0, len(self.ids)))

    @property
    def sequence_ids(self) -> list[Optional[int]]:
        out: list[Optional[int]] = [None] * len(self.ids)
        for sequence in range(self.n_sequences):
            start, stop = self._range(sequence)
            out[start:stop] = [sequence] * (stop - start)
        return out

    def __len__(self) -> int:
        return len(self.ids)

    def token_to_sequence(self, token_index: int) -> Optional[int]:
        if token_index > len(self.ids):  # HF's bound (not >=)
            return None
        if not self.sequence_ranges:
            return 0
        return next((s for s, (start, stop) in self.sequence_ranges.items() if start <= token_index < stop), None)

    def token_to_chars(self, token_index: int) -> Optional[tuple[int, int]]:
        if self.token_to_sequence(token_index) is None or not 0 <= token_index < len(self.ids):
            return None
        return self.offsets[token_index]

    def token_to_word(self, token_index: int) -> Optional[int]:
        if self.token_to_sequence(token_index) is None or not 0 <= token_index < len(self.ids):
            return None
        return self.word_ids[token_index]

    def word_to_tokens(self, word_index: int, sequence_index: int = 0) -> Optional[tuple[int, int]]:
        start, stop = self._range(sequence_index)
        if start > len(self.word_ids) or stop > len(self.word_ids):
            return None
        first = last = None
        for i, word in enumerate(self.word_ids[start:stop]):
            if word is not None and word > word_index:
                break
            if word == word_index:
                first = i if first is None else first
                last = i + 1
        return None if first is None else (start + first, start + last)

    def word_to_chars(self, word_index: int, sequence_index: int = 0) -> Optional[tuple[int, int]]:
        tokens = self.word_to_tokens(word_index, sequence_index)
        if tokens is None or tokens[1] == 0:
            return None
        return self.offsets[tokens[0]][0], self.offsets[tokens[1] - 1][1]

    def char_to_token(self, char_pos: int, sequence_index: int = 0) -> Optional[int]:
        start, stop = self._range(sequence_index)
        if start > len(self.offsets) or stop > len(self.offsets):
            return None
        for i, (begin, end) in enumerate(self.offsets[start:stop]):
            if begin <= char_pos < end:
                return start + i
        return None

    def char_to_word(self, char_pos: int, sequence_index: int = 0) -> Optional[int]:
        token = self.char_to_token(char_pos, sequence_index)
        return None if token is None else self.token_to_word(token)

    # -- HF's operations --------------------------------------------------------------------

    def _slice(self, start: int, stop: int) -> "Encoding":
        return Encoding(self.ids[start:stop], self.tokens[start:stop], self.offsets[start:stop],
                        self.word_ids[start:stop], self.type_ids[start:stop], self.special_tokens_mask[start:stop],
                        self.attention_mask[start:stop])

    def truncate(self, max_length: int, stride: int = 0, direction: str = "right") -> None:
        """HF's ``Encoding.truncate``: keep ``max_length`` tokens (the first, or the last with
        ``direction="left"``); the rest become :attr:`overflowing` windows that overlap the
        previous one by ``stride`` tokens."""
        n = len(self.ids)
        if max_length >= n:
            return
        if max_length == 0:
            whole = Encoding.__new__(Encoding)
            for name in self.__slots__:
                setattr(whole, name, getattr(self, name))
            self.__init__([], [], [], [], overflowing=[whole])
            return
        if stride >= max_length:
            raise UnsupportedTokenizerError(f"stride {stride} must be below the truncation length {max_length}")
        step = max_length - stride
        windows = []
        if direction == "right":
            for start in range(0, n, step):
                stop = min(start + max_length, n)
                windows.append((start, stop))
                if stop == n:
                    break
        else:
            for last in range(n - 1, -1, -step):
                start = max(last + 1 - max_length, 0)
                windows.append((start, last + 1))
                if start == 0:
                    break
        first = self._slice(*windows[0])
        first.overflowing = [self._slice(*window) for window in windows[1:]]
        for name in self.__slots__:
            setattr(self, name, getattr(first, name))

    def pad(self, length: int, direction: str = "right", pad_id: int = 0, pad_type_id: int = 0,
            pad_token: str = "[PAD]") -> None:
        """HF's ``Encoding.pad``: the overflowing parts first, then this one if shorter (left
        padding moves the sequence ranges with the tokens)."""
        for part in self.overflowing:
            part.pad(length, direction, pad_id, pad_type_id, pad_token)
        missing = length - len(self.ids)
        if missing <= 0:
            return
        fills = (("ids", pad_id), ("type_ids", pad_type_id), ("tokens", pad_token), ("word_ids", None),
                 ("attention_mask", 0), ("special_tokens_mask", 1), ("offsets", (0, 0)))
        for name, value in fills:
            values = getattr(self, name)
            setattr(self, name, [value] * missing + values if direction == "left" else values + [value] * missing)
        if direction == "left":
            self.sequence_ranges = {s: (start + missing, stop + missing)
                                    for s, (start, stop) in self.sequence_ranges.items()}

    def __repr__(self) -> str:
        return (f"Encoding(num_tokens={len(self)}, attributes=[ids, type_ids, tokens, offsets, attention_mask, "
                "special_tokens_mask, overflowing])")


def pad_encodings(encodings: list[Encoding], padding: Optional[dict]) -> None:
    """HF's ``pad_encodings``: every encoding to the padding's ``length`` (None: the longest),
    rounded up to ``pad_to_multiple_of``."""
    if not padding or not encodings:
        return
    length = padding["length"]
    if length is None:
        length = max(len(e) for e in encodings)
    length = round_up(length, padding.get("pad_to_multiple_of"))
    for encoding in encodings:
        encoding.pad(length, padding["direction"], padding["pad_id"], padding["pad_type_id"], padding["pad_token"])


def round_up(length: int, multiple: Optional[int]) -> int:
    if multiple and length % multiple:
        length += multiple - length % multiple
    return length
