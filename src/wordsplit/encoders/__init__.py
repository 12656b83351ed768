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

import importlib
from typing import Callable, Optional

from ..errors import UnknownComponentError
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


def add_model_encoder(name: str, load: Callable[[], EncoderClass]) -> None:
    """Register under ``name`` an encoder that only the vocabularies of one model kind take;
    ``load()`` gives its class, the first time it is asked for. It is found by name like any
    encoder (``TokenizerOptions(encoder=name)``, and ``encoder="auto"`` picks it for its
    vocabularies), but it is not listed with the encoders every vocabulary takes (what
    ``wordsplit bench`` and ``--encoder`` iterate over): it is a family of the encoder
    registry whose one member is ``name``.

    >>> get_encoder("unigram").__name__, "unigram" in ENCODERS.names()
    ('UnigramEncoder', False)
    """

    def member(asked: str) -> EncoderClass:
        if asked != name:
            raise UnknownComponentError(f"unknown encoder {asked!r} (did you mean {name!r}?)")
        return load()

    ENCODERS.add_family(name, member)


def _imported(module: str, name: str) -> Callable[[], EncoderClass]:
    """What loads the class ``name`` of this package's ``module``."""
    return lambda: getattr(importlib.import_module(f"{__name__}.{module}"), name)


from . import backtrack, buffer_sweep, heap_merge, score_merge  # noqa: E402, F401

# The encoders of the word models, imported when a vocabulary of theirs is first built: a
# program that tokenizes with byte-level BPE does not import them.
add_model_encoder("wordpiece", _imported("wordpiece", "WordPieceEncoder"))
add_model_encoder("word-level", _imported("wordpiece", "WordLevelEncoder"))
add_model_encoder("unigram", _imported("unigram", "UnigramEncoder"))
add_model_encoder("character-bpe", _imported("character_bpe", "CharacterBpeEncoder"))

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
