"""Span encoders: piece bytes → token ids, each an exact BPE algorithm.

All encoders give the ids of the reference rule (repeatedly merge the adjacent pair of
lowest priority, leftmost first) and differ only in cost:

- ``buffer-sweep`` (alias ``reference``): scans all pairs after each merge, O(n²). The
  reference the others are tested against.
- ``heap-merge``: a heap of adjacent pairs with lazy invalidation, O(n log n).
- ``backtrack``: GitHub ``bpe``'s longest-match with pair-validity backtracking, O(n).

An encoder is a class built as ``cls(tables)`` (a :class:`~wordsplit.tables.MergeTables`) with
``encode_piece(piece: bytes) -> list[int]``. Register your own with :func:`register_encoder`:

>>> @register_encoder("bytes-only")
... class BytesOnlyEncoder:
...     '''One token per byte: not BPE, but it shows the contract.'''
...     def __init__(self, tables):
...         self.tables = tables
...     def encode_piece(self, piece):
...         return [self.tables.ranks[bytes([b])] for b in piece]
>>> from wordsplit import load_vocab
>>> get_encoder("bytes-only")(MergeTables(load_vocab("gpt2"))).encode_piece(b"hi")
[71, 72]
>>> _ = ENCODERS.remove("bytes-only")  # (this example cleans up after itself)
"""

from __future__ import annotations

from typing import Callable, Optional

from ..protocols import EncoderClass
from ..registry import ENCODERS
from ..spec import CharacterBpe, Unigram, WordLevel, WordPiece
from ..tables import BacktrackTables, MergeTables


def register_encoder(name: str, *, aliases: tuple[str, ...] = ()) -> Callable[[EncoderClass], EncoderClass]:
    """Decorator: register an encoder class (``cls(tables)`` with ``encode_piece(piece) -> ids``).

    Raises:
        DuplicateNameError: ``name`` or an alias is taken.
    """
    return ENCODERS.register(name, aliases=aliases)


def get_encoder(name: str) -> EncoderClass:
    """The Python encoder class registered as ``name``; unknown names list the known ones."""
    return ENCODERS.get(name)


from . import backtrack, buffer_sweep, character_bpe, heap_merge, score_merge, unigram, wordpiece  # noqa: E402, F401

# The byte-level BPE encoders: a SentencePiece vocabulary's characters are not their symbols.
BYTE_LEVEL_ENCODERS = ("buffer-sweep", "heap-merge", "backtrack")


def encoder_for(vocab) -> Optional[str]:
    """The encoder a vocabulary's model needs (``score-merge`` for a SentencePiece ``.model``,
    ``rank-merge`` for a SentencePiece-style tokenizer.json, ``wordpiece``, ``word-level``,
    ``character-bpe``, ``unigram``), or
    None for byte-level BPE, which every encoder runs.

    >>> from wordsplit import load_vocab
    >>> encoder_for(load_vocab("gpt2")) is None
    True
    """
    model = vocab.pipeline.model
    if isinstance(model, WordPiece):
        return "wordpiece"
    if isinstance(model, WordLevel):
        return "word-level"
    if isinstance(model, CharacterBpe):
        return "character-bpe"
    if isinstance(model, Unigram):
        return "unigram"
    if not vocab.pipeline.sentencepiece:
        return None
    return "rank-merge" if model.merge_by == "rank" else "score-merge"


__all__ = ["ENCODERS", "BacktrackTables", "MergeTables", "encoder_for", "get_encoder", "register_encoder"]
