"""``score-merge``: SentencePiece BPE (``bpe_model.cc``), O(n log n) per piece.

The symbols start as the characters of the piece (a user-defined piece is one symbol that never
merges: the ``sentencepiece`` spanner gives it as a piece of its own). Two adjacent symbols
merge when together they spell a piece; the pair whose piece has the highest score goes
first, the leftmost on ties (``sentencepiece``'s agenda orders by score, then by the left
symbol's position). The vocabulary holds that rule as its pair-ranked table (rank 0 = highest
score, see :mod:`wordsplit.formats.sentencepiece`); a model whose pieces hold characters that
are no piece of their own (they still merge: ``sentencepiece`` looks up the joined text only)
carries its scores instead, which rank each piece by its text. As in ``sentencepiece``, every
adjacent pair that can merge waits in a heap, and an entry whose symbols changed since it was
pushed is skipped when it comes up (lazy invalidation).

Then each symbol becomes its id: a piece is its id, except an UNUSED piece, which is split back
into the two symbols it was last proposed from (recursively); a symbol that is no piece (a
character outside the vocabulary, or an unused piece no merge made) is its UTF-8 bytes as byte
pieces (byte fallback), or without byte fallback the model's ``unk_token``, a run of such
symbols one ``unk_token``.

>>> from wordsplit.formats.sentencepiece import Piece, ModelProto, sentencepiece_vocab
>>> from wordsplit.tables import MergeTables
>>> pieces = [Piece("<unk>", 0, 2)] + [Piece(f"<0x{b:02X}>", 0, 6) for b in range(256)] + [
...     Piece(t, -i, 1) for i, t in enumerate(["▁", "a", "b", "ab", "▁ab"])]
>>> vocab = sentencepiece_vocab(ModelProto(pieces, model_type="BPE", byte_fallback=True), name="tiny")
>>> encoder = ScoreMergeEncoder(MergeTables(vocab))
>>> encoder.encode_piece("▁abab".encode()), encoder.encode_piece("é".encode())
([261, 260], [196, 170])
"""

from __future__ import annotations

from typing import Optional

from . import add_model_encoder
from ..errors import VocabFormatError
from ..tables import MergeTables
from .heap_merge import merge_spans


def symbol_ids(ranks) -> tuple[dict[str, int], list[Optional[int]]]:
    """The id of each token by its text (a token that is a byte 0x80-0xFF has none: no text
    spells it), and the id of each byte's ``<0xNN>`` token (its byte, or its text where a
    one-character token is that byte's text: see :mod:`wordsplit.formats.sentencepiece`)."""
    ids: dict[str, int] = {}
    for data, i in ranks.items():
        try:
            ids[data.decode("utf-8")] = i
        except UnicodeDecodeError:
            pass
    byte_ids = [ranks.get(f"<0x{b:02X}>".encode(), ranks.get(bytes([b]))) for b in range(256)]
    return ids, byte_ids


def model_encoder(name: str):
    """Decorator: register an encoder class that only the vocabularies of one model kind take
    under ``name`` (:func:`~wordsplit.encoders.add_model_encoder`)."""

    def deco(cls: type) -> type:
        add_model_encoder(name, lambda: cls)
        return cls

    return deco


@model_encoder("score-merge")
class ScoreMergeEncoder:
    """SentencePiece's BPE merge with byte fallback or the unknown piece (see the module
    docstring)."""

    def __init__(self, tables: MergeTables) -> None:
        vocab = tables.vocab
        model = vocab.pipeline.model
        self.merges = vocab.merges or {}
        # The pieces symbols can be (NORMAL, USER_DEFINED, UNUSED), by text.
        self.ids, self.byte_ids = symbol_ids(vocab.ranks)
        # A model whose pieces hold characters that are no piece ranks its pieces by score (a
        # symbol pair merges when its text is a piece, whatever its halves are); the others by
        # their pair-ranked table.
        self.piece_ranks = None if vocab.scores is None else score_ranks(vocab.scores, self.ids, self.byte_ids)
        # A single character that is a control piece's text is that piece (PieceToId looks
        # the reserved pieces up first); longer symbols are pieces, which are never reserved.
        self.reserved = {text: i for text, i in vocab.special_tokens.items() if len(text) == 1}
        self.user_defined = {text: self.ids[text] for text in vocab.pipeline.spanner.user_defined if text in self.ids}
        # (the model's unused pieces: sentencepiece splits them back; llama.cpp's merge keeps them)
        self.unused = frozenset(self.ids[text] for text in vocab.pipeline.model.unused if text in self.ids)
        self.byte_fallback = getattr(model, "byte_fallback", True)
        self.unk_id = vocab.special_tokens.get(getattr(model, "unk_token", ""))
        if not self.byte_fallback:
            if self.unk_id is None:
                raise VocabFormatError(f"{vocab.source}: the model's unk_token {model.unk_token!r} is not one of its "
                                       "special tokens (a model without byte fallback needs it)")
            # (its unknown token stands for a run of characters: the offsets need each token's length)
            self.token_lengths = self._token_lengths

    def encode_piece(self, piece: bytes) -> list[int]:
        out: list[int] = []
        self._encode(piece.decode("utf-8"), out, None)
        return out

    def _token_lengths(self, piece: bytes) -> list[int]:
        """The UTF-8 length of the part of ``piece`` each of its tokens stands for."""
        sizes: list[int] = []
        self._encode(piece.decode("utf-8"), [], sizes)
        return sizes

    def _encode(self, text: str, out: list[int], sizes: Optional[list[int]]) -> None:
        frozen = self.user_defined.get(text)
        if frozen is not None:
            out.append(frozen)
            if sizes is not None:
                sizes.append(len(text.encode("utf-8")))
            return
        ids_of, merges, unused, piece_ranks = self.ids, self.merges, self.unused, self.piece_ranks
        # For each UNUSED piece proposed, the two symbols it was last proposed from.
        last_made_from: dict[str, tuple[str, str]] = {}

        def rank_of(start: int, mid: int, end: int) -> Optional[int]:
            if piece_ranks is not None:
                rank = piece_ranks.get(text[start:end])
            else:
                left, right = ids_of.get(text[start:mid]), ids_of.get(text[mid:end])
                if left is None or right is None:
                    return None
                rank = merges.get((left, right))
            if rank is not None and ids_of[text[start:end]] in unused:
                last_made_from[text[start:end]] = (text[start:mid], text[mid:end])
            return rank

        after_unknown = False
        for start, end in merge_spans(len(text), rank_of):
            after_unknown = self._emit(text[start:end], ids_of.get(text[start:end]), last_made_from, out, sizes,
                                       after_unknown)

    def _emit(self, symbol: str, symbol_id: Optional[int], last_made_from: dict, out: list[int],
              sizes: Optional[list[int]], after_unknown: bool) -> bool:
        """The ids of one final symbol (``resegment``, then the byte fallback or the unknown
        piece of sentencepiece, a run of unknown symbols one unknown piece); whether the symbol
        was unknown."""
        reserved = self.reserved.get(symbol) if len(symbol) == 1 else None
        if reserved is not None and reserved != self.unk_id:
            out.append(reserved)
            size = len(symbol.encode("utf-8"))
        elif symbol_id in self.unused and symbol in last_made_from:
            left, right = last_made_from[symbol]
            after_unknown = self._emit(left, self.ids.get(left), last_made_from, out, sizes, after_unknown)
            return self._emit(right, self.ids.get(right), last_made_from, out, sizes, after_unknown)
        elif reserved is not None or symbol_id is None or symbol_id in self.unused:
            # Unknown (an unused piece no merge made is unknown too, as sentencepiece 0.2 has it).
            data = symbol.encode("utf-8")
            if self.byte_fallback:
                out.extend(self.byte_ids[b] for b in data)
                if sizes is not None:
                    sizes.extend([1] * len(data))
            elif after_unknown:
                if sizes is not None:
                    sizes[-1] += len(data)
            else:
                out.append(self.unk_id)
                if sizes is not None:
                    sizes.append(len(data))
            return True
        else:
            out.append(symbol_id)
            size = len(symbol.encode("utf-8"))
        if sizes is not None:
            sizes.append(size)
        return False


def score_ranks(scores, ids: dict[str, int], byte_ids) -> dict[str, int]:
    """The merge rank of each piece of more than one character, by its text: its score's place
    among theirs (0 = highest; equal scores, equal ranks), the rank the pair-ranked table gives
    its splits (:func:`~wordsplit.formats.sentencepiece._score_merges`). Byte pieces spelled
    ``<0xNN>`` are no merge's.

    >>> score_ranks([0.0, -1.0, -2.0, -1.0], {"a": 0, "ab": 1, "abc": 2, "bc": 3}, [])
    {'ab': 0, 'abc': 1, 'bc': 0}
    """
    byte_pieces = set(byte_ids)
    made = {text: i for text, i in ids.items() if len(text) > 1 and i not in byte_pieces}
    order = {score: rank for rank, score in enumerate(sorted({scores[i] for i in made.values()}, reverse=True))}
    return {text: order[scores[i]] for text, i in made.items()}


@model_encoder("rank-merge")
class RankMergeEncoder:
    """HF ``tokenizers``' character-level BPE with ``byte_fallback`` (a SentencePiece-style
    tokenizer.json), O(n log n) per piece.

    With ``ignore_merges``, a piece that is a token is that token. Otherwise each character is a
    symbol, or, when it is no token, each of its UTF-8 bytes is one (its ``<0xNN>`` token); then
    the adjacent pair of lowest merge rank (the file's order) merges, the leftmost on ties, as
    HF's ``Word::merge_all`` does, until none is left.

    >>> import json
    >>> from wordsplit.formats.hf import read_hf_tokenizer_json
    >>> from wordsplit.formats.hf_sentencepiece import BYTE_FALLBACK_DECODER
    >>> vocab = {f"<0x{b:02X}>": b for b in range(256)} | {"▁": 256, "a": 257, "b": 258, "ab": 259, "▁ab": 260}
    >>> spec = {"model": {"type": "BPE", "vocab": vocab, "merges": ["a b", "▁ ab"], "byte_fallback": True},
    ...         "pre_tokenizer": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": False},
    ...         "decoder": BYTE_FALLBACK_DECODER}
    >>> encoder = RankMergeEncoder(MergeTables(read_hf_tokenizer_json(json.dumps(spec).encode())))
    >>> encoder.encode_piece("▁abé".encode())
    [260, 195, 169]
    """

    def __init__(self, tables: MergeTables) -> None:
        vocab = tables.vocab
        self.whole = vocab.pipeline.model.ignore_merges
        self.merges = vocab.merges or {}
        self.ids, self.byte_ids = symbol_ids(vocab.ranks)
        text_of = {i: text for text, i in self.ids.items()}
        # The token each pair makes (a pair whose texts do not join to a token is left out).
        self.made = {pair: made for pair in self.merges
                     if pair[0] in text_of and pair[1] in text_of
                     and (made := self.ids.get(text_of[pair[0]] + text_of[pair[1]])) is not None}

    def encode_piece(self, piece: bytes) -> list[int]:
        text = piece.decode("utf-8")
        if self.whole and text in self.ids:
            return [self.ids[text]]
        symbols: list[int] = []
        for char in text:
            token = self.ids.get(char)
            if token is None:
                symbols.extend(self.byte_ids[b] for b in char.encode("utf-8"))
            else:
                symbols.append(token)
        return merge_by_rank(symbols, self.merges, self.made)


def merge_by_rank(symbols: list[int], merges: dict, made: dict) -> list[int]:
    """BPE over a list of token ids: the adjacent pair of lowest rank in ``merges`` becomes
    ``made[pair]``, the leftmost on ties (:func:`~.heap_merge.merge_spans`).

    >>> merge_by_rank([1, 2, 3], {(1, 2): 0, (12, 3): 1}, {(1, 2): 12, (12, 3): 123})
    [123]
    """
    ids = list(symbols)  # the id of the symbol that starts at each place

    def rank_of(start: int, mid: int, end: int) -> Optional[int]:
        pair = (ids[start], ids[mid])
        return merges.get(pair) if pair in made else None

    def merged(start: int, mid: int, end: int) -> None:
        ids[start] = made[(ids[start], ids[mid])]

    return [ids[start] for start, _ in merge_spans(len(ids), rank_of, merged)]
