"""``character-bpe``: HF's BPE model over each piece's characters (or bytes), with an
end-of-word suffix, a continuing-subword prefix and the unknown token
(:class:`~wordsplit.spec.CharacterBpe`).

As HF's ``BPE::merge_word``: each character (each byte, for a byte-level vocabulary) is a
symbol, every one after the first spelled with the prefix and the last one with the
end-of-word suffix (CLIP's ``</w>``); a symbol that is no token becomes the unknown token
(consecutive ones a single one with ``fuse_unk``), or is dropped when the model has none. Then
``Word::merge_all``: the adjacent pair of lowest rank in the merges becomes the token of the
left one's bytes and the right one's after the prefix's length, the leftmost on ties, until no
listed pair is left. The core's ``character-bpe`` encoder is this one's native twin.

>>> from wordsplit import Vocab
>>> from wordsplit.spec import CharacterBpe, PipelineSpec, Split, SplitProgram
>>> tokens = ["[UNK]", "l", "o", "w", "o</w>", "w</w>", "lo", "low</w>"]
>>> vocab = Vocab(name="tiny", ranks={t.encode(): i for i, t in enumerate(tokens)}, merges={(1, 2): 0, (6, 5): 1},
...               pipeline=PipelineSpec(spanner=SplitProgram((Split(r"\\s", "Removed"),)),
...                                     model=CharacterBpe("[UNK]", end_of_word_suffix="</w>")))
>>> encoder = CharacterBpeEncoder(MergeTables(vocab))
>>> encoder.encode_piece(b"low"), encoder.encode_piece(b"lxyo")
([7], [1, 0, 0, 4])
"""

from __future__ import annotations

from typing import Optional

from ..errors import EncodeInputError
from ..formats.bytelevel import token_text
from ..spec import CharacterBpe
from ..tables import MergeTables
from ..vocab import merge_cut
from .heap_merge import merge_spans

__all__ = ["CharacterBpeEncoder"]


class CharacterBpeEncoder:
    """HF's BPE over characters (see the module docstring)."""

    def __init__(self, tables: MergeTables) -> None:
        vocab = tables.vocab
        model = vocab.pipeline.model
        if not isinstance(model, CharacterBpe):
            raise TypeError(f"the character-bpe encoder runs a CharacterBpe model, not {model.kind}")
        self.vocab, self.model = vocab, model
        self.ranks = vocab.ranks
        self.merges = vocab.merges or {}
        text_of = {i: data for data, i in self.ranks.items()}
        # The token each listed pair makes: the two spell it together, the right one without
        # the prefix's length (HF's rule; the reader and Vocab checked it is a token).
        cut = merge_cut(model)
        self.made = {pair: self.ranks[text_of[pair[0]] + text_of[pair[1]][cut:]] for pair in self.merges}
        self.suffix = model.end_of_word_suffix.encode("utf-8")
        self.prefix = model.continuing_subword_prefix.encode("utf-8")

    def _unknown(self, piece: bytes) -> int:
        unk = self.ranks.get(self.model.unk_token.encode("utf-8"))
        if unk is None:
            raise EncodeInputError(
                f"{self.vocab.name}: {piece[:40]!r} needs the unknown token {self.model.unk_token!r}, which is not in "
                "the vocabulary (HF raises UnkTokenOutOfVocabulary); add it to the vocabulary"
            )
        return unk

    def encode_piece(self, piece: bytes) -> list[int]:
        return [i for i, _ in self.tokens_of(piece)]

    def token_spans(self, piece: bytes) -> list[tuple[int, int]]:
        """Where HF's offsets place each token of ``piece``: ``(start, end)`` in its bytes. HF
        adds up the lengths of the symbols kept from the piece's start, so a character dropped
        (no token, and no unknown token) has no length: the tokens after it are placed that
        much earlier (the text before them, not theirs). A byte-level vocabulary's lengths are
        its bytes' characters in ByteLevel's alphabet (one or two bytes each), a place read back
        as the byte whose character holds it.

        >>> from wordsplit import Vocab
        >>> from wordsplit.spec import CharacterBpe, PipelineSpec, SplitProgram
        >>> ranks = {b"a": 0, b"b": 1, b"ab": 2}
        >>> spec = PipelineSpec(spanner=SplitProgram(()), model=CharacterBpe(""))
        >>> vocab = Vocab(name="t", ranks=ranks, merges={(0, 1): 0}, pipeline=spec)
        >>> CharacterBpeEncoder(MergeTables(vocab)).token_spans(b"xaxbb")  # "ab" from "axb", then "b"
        [(0, 2), (2, 3)]
        """
        units = self._units(piece)
        # The HF length of each unit's symbol (0: dropped), and where it ends in the piece.
        lengths, ends, end = [], [], 0
        for k, unit in enumerate(units):
            end += len(unit)
            ends.append(end)
            kept = bool(self.model.unk_token) or self._symbol(unit, k, len(units)) in self.ranks
            lengths.append(0 if not kept else len(token_text(unit).encode("utf-8")) if self.model.byte_level
                           else len(unit))
        kept_before = {0: 0}
        total = 0
        for unit_end, length in zip(ends, lengths):
            total += length
            kept_before[unit_end] = total
        spans, start = [], 0
        for _, token_end in self.tokens_of(piece):
            stop = kept_before[token_end]
            spans.append((start, stop))
            start = stop
        if not self.model.byte_level:
            return spans
        # ByteLevel's characters: the byte (unit) each of their UTF-8 bytes belongs to.
        owner = [k for k, unit in enumerate(units) for _ in token_text(unit).encode("utf-8")]
        return [(owner[a], owner[b - 1] + 1) for a, b in spans]

    def _units(self, piece: bytes) -> list[bytes]:
        """The piece's symbols before the prefix and suffix: its bytes, or its characters."""
        if self.model.byte_level:
            return [piece[k:k + 1] for k in range(len(piece))]
        return [char.encode("utf-8") for char in piece.decode("utf-8")]

    def _symbol(self, unit: bytes, k: int, count: int) -> bytes:
        """Unit ``k`` of ``count`` as the symbol it is looked up as (the prefix after the
        first, the suffix on the last)."""
        symbol = self.prefix + unit if k else unit
        return symbol + self.suffix if k == count - 1 else symbol

    def tokens_of(self, piece: bytes) -> list[tuple[int, int]]:
        """``(id, byte end)`` of each token of the piece ``piece``."""
        units = self._units(piece)
        ids: list[int] = []  # the symbols' ids, and the byte end of each
        ends: list[int] = []
        unknown: Optional[int] = None  # the byte end of a pending unknown symbol
        position = 0
        for k, unit in enumerate(units):
            position += len(unit)
            found = self.ranks.get(self._symbol(unit, k, len(units)))
            if found is not None:
                if unknown is not None:
                    ids.append(self._unknown(piece))
                    ends.append(unknown)
                    unknown = None
                ids.append(found)
                ends.append(position)
            elif self.model.unk_token:
                if unknown is not None and not self.model.fuse_unk:
                    ids.append(self._unknown(piece))
                    ends.append(unknown)
                unknown = position
        if unknown is not None:
            ids.append(self._unknown(piece))
            ends.append(unknown)
        merges, made = self.merges, self.made

        def rank_of(start: int, mid: int, end: int) -> Optional[int]:
            return merges.get((ids[start], ids[mid]))

        def merged(start: int, mid: int, end: int) -> None:
            ids[start] = made[(ids[start], ids[mid])]

        return [(ids[start], ends[end - 1]) for start, end in merge_spans(len(ids), rank_of, merged)]
