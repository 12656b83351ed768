r"""HF ``tokenizers``' ``Encoding``: what :meth:`Tokenizer.encode
<wordsplit.compat.tokenizers.Tokenizer.encode>` returns, and what an accelerated transformers
tokenizer's backend hands to transformers.

Every field, map and operation is HF's, on :class:`~wordsplit.postprocess.Parts`: the
``sequence_ids`` and the char/word/token maps read HF's sequence ranges (``n_sequences`` is 1
and every token of sequence 0 when the post-processor set none), ``truncate`` and ``pad`` are
:mod:`~wordsplit.compat.tokenizers.truncation`'s and :mod:`~wordsplit.compat.tokenizers.padding`'s,
and ``merge`` is HF's ``Encoding.merge``. The lists it returns are copies, as HF's are.

>>> from wordsplit.postprocess import Parts
>>> enc = Encoding(Parts.of([5, 6, 7], ["a", "b", "c"], [(0, 1), (1, 2), (2, 3)], [0, 1, 2], type_id=0))
>>> enc.truncate(2, stride=1)
>>> enc.ids, [o.ids for o in enc.overflowing]
([5, 6], [[6, 7]])
>>> enc.pad(4, direction="left", pad_id=0, pad_token="<pad>")
>>> enc.ids, enc.attention_mask, enc.char_to_token(1)
([0, 0, 5, 6], [0, 0, 1, 1], 3)
"""

from __future__ import annotations

from typing import Optional

from ...postprocess import Parts
from ...vocab import WHITE_SPACE
from .padding import pad
from .truncation import DIRECTIONS, truncate, unsigned

__all__ = ["Encoding", "matched_literal"]


def matched_literal(text: str, start: int, end: int, content: str) -> str:
    """HF's token string for an added token found at ``text[start:end]``: the text it matched,
    which holds the white space an ``lstrip`` or ``rstrip`` token took (HF's token value is
    that slice; ByteLevel's and RobertaProcessing's ``trim_offsets`` then move the offsets past
    it). A ``normalized`` token is matched in the normalized text: its content is kept, with
    the white space around it.

    >>> matched_literal("a   <mask> b", 1, 10, "<mask>"), matched_literal("<s>", 0, 3, "<s>")
    ('   <mask>', '<s>')
    """
    span = text[start:end]
    if span == content or content in span:
        return span
    lead = len(span) - len(span.lstrip("".join(WHITE_SPACE)))
    trail = len(span) - len(span.rstrip("".join(WHITE_SPACE)))
    return span[:lead] + content + span[len(span) - trail:] if lead + trail < len(span) else content


class Encoding:
    """HF's ``Encoding``: the ids of a text (or a pair) and what goes with each token."""

    __slots__ = ("_parts",)

    def __init__(self, parts: Optional[Parts] = None) -> None:
        self._parts = parts if parts is not None else Parts()

    @property
    def ids(self) -> list[int]:
        return list(self._parts.ids)

    @property
    def tokens(self) -> list[str]:
        """Each token as HF spells it: as the file's vocabulary writes it (``"Ġworld"``,
        ``"▁world"``, ``"##ing"``, ``"[UNK]"``), or an added token's text."""
        return list(self._parts.tokens)

    @property
    def offsets(self) -> list[tuple[int, int]]:
        """Character ``(start, end)`` of each token in its text; ``(0, 0)`` for added specials."""
        return list(self._parts.offsets)

    @property
    def attention_mask(self) -> list[int]:
        return list(self._parts.attention_mask)

    @property
    def special_tokens_mask(self) -> list[int]:
        """1 for the tokens the post-processor or padding added, else 0 (special tokens found in
        the text too)."""
        return list(self._parts.special_tokens_mask)

    @property
    def type_ids(self) -> list[int]:
        return list(self._parts.type_ids)

    @property
    def word_ids(self) -> list[Optional[int]]:
        """The index of each token's word (pre-tokenizer piece) in its text; None for added tokens."""
        return list(self._parts.word_ids)

    words = word_ids  # HF's deprecated name

    @property
    def sequence_ids(self) -> list[Optional[int]]:
        """0 or 1: which text of a pair each token is from; None for added tokens."""
        return self._parts.sequence_ids

    @property
    def n_sequences(self) -> int:
        return self._parts.n_sequences

    @property
    def overflowing(self) -> list["Encoding"]:
        """The parts truncation cut off, each post-processed and padded as this one (copies)."""
        return [Encoding(part.copy()) for part in self._parts.overflowing]

    def set_sequence_id(self, sequence_id: int) -> None:
        """Make every token part of sequence ``sequence_id``."""
        self._parts.set_sequence_id(unsigned(sequence_id, "sequence_id"))

    def __len__(self) -> int:
        return len(self._parts.ids)

    def __repr__(self) -> str:
        return (f"Encoding(num_tokens={len(self)}, attributes=[ids, type_ids, tokens, offsets, attention_mask, "
                "special_tokens_mask, overflowing])")

    def __getstate__(self) -> Parts:
        return self._parts

    def __setstate__(self, state: Parts) -> None:
        self._parts = state

    # -- maps ----------------------------------------------------------------------------------

    def token_to_sequence(self, token_index: int) -> Optional[int]:
        """The sequence of a token (0 when the encoding has one sequence), None past the end."""
        parts = self._parts
        if token_index > len(parts.ids):  # HF's bound (not >=)
            return None
        if not parts.sequence_ranges:
            return 0
        return next((s for s, (start, stop) in parts.sequence_ranges.items() if start <= token_index < stop), None)

    def token_to_chars(self, token_index: int) -> Optional[tuple[int, int]]:
        """The character offsets of a token, or None."""
        if self.token_to_sequence(token_index) is None or not 0 <= token_index < len(self._parts.ids):
            return None
        return self._parts.offsets[token_index]

    def token_to_word(self, token_index: int) -> Optional[int]:
        """The word of a token, or None (an added token, or no such token)."""
        if self.token_to_sequence(token_index) is None or not 0 <= token_index < len(self._parts.ids):
            return None
        return self._parts.word_ids[token_index]

    def word_to_tokens(self, word_index: int, sequence_index: int = 0) -> Optional[tuple[int, int]]:
        """``(first, last + 1)`` of the tokens of a word of a sequence, or None."""
        parts = self._parts
        start, stop = parts.sequence_range(sequence_index)
        if start > len(parts.word_ids) or stop > len(parts.word_ids):
            return None
        first = last = None
        for i, word in enumerate(parts.word_ids[start:stop]):
            if word is not None and word > word_index:
                break
            if word == word_index:
                first = i if first is None else first
                last = i + 1
        return None if first is None else (start + first, start + last)

    def word_to_chars(self, word_index: int, sequence_index: int = 0) -> Optional[tuple[int, int]]:
        """The character offsets of a word of a sequence, or None."""
        tokens = self.word_to_tokens(word_index, sequence_index)
        if tokens is None or tokens[1] == 0:
            return None
        return self._parts.offsets[tokens[0]][0], self._parts.offsets[tokens[1] - 1][1]

    def char_to_token(self, char_pos: int, sequence_index: int = 0) -> Optional[int]:
        """The token holding a character of a sequence, or None."""
        parts = self._parts
        start, stop = parts.sequence_range(sequence_index)
        if start > len(parts.offsets) or stop > len(parts.offsets):
            return None
        for i, (begin, end) in enumerate(parts.offsets[start:stop]):
            if begin <= char_pos < end:
                return start + i
        return None

    def char_to_word(self, char_pos: int, sequence_index: int = 0) -> Optional[int]:
        """The word holding a character of a sequence, or None."""
        token = self.char_to_token(char_pos, sequence_index)
        return None if token is None else self.token_to_word(token)

    # -- operations ----------------------------------------------------------------------------

    def truncate(self, max_length: int, stride: int = 0, direction: str = "right") -> None:
        """Keep ``max_length`` tokens; the rest become :attr:`overflowing` windows that overlap
        by ``stride`` tokens (HF's ``Encoding.truncate``).

        Raises:
            ValueError: an unknown direction; TruncationError: ``stride`` not below
                ``max_length`` when tokens are cut (where HF panics).
        """
        if direction not in DIRECTIONS:
            raise ValueError(f"Invalid truncation direction value : {direction}")
        truncate(self._parts, unsigned(max_length, "max_length"), unsigned(stride, "stride"), direction)

    def pad(self, length: int, direction: str = "right", pad_id: int = 0, pad_type_id: int = 0,
            pad_token: str = "[PAD]") -> None:
        """Pad to ``length`` tokens (the overflowing parts too), as HF's ``Encoding.pad``.

        Raises:
            ValueError: an unknown direction.
        """
        if direction not in DIRECTIONS:
            raise ValueError(f"Unknown `direction`: `{direction}`. Use one of `left` or `right`")
        pad(self._parts, unsigned(length, "length"), pad_id, pad_type_id, pad_token, direction)

    @staticmethod
    def merge(encodings: list["Encoding"], growing_offsets: bool = True) -> "Encoding":
        """The encodings one after another (HF's ``Encoding.merge``: ``growing_offsets`` moves
        each one's offsets past the previous one's end)."""
        return Encoding(Parts.merge([encoding._parts.copy() for encoding in encodings], growing_offsets))
