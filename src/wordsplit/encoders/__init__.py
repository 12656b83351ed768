"""Span encoders: piece bytes → token ids, each an exact BPE algorithm.

All encoders give the ids of the reference rule (repeatedly merge the adjacent pair of
lowest priority, leftmost first) and differ only in cost:

- ``buffer-sweep`` (alias ``reference``): scans all pairs after each merge, O(n²). The
  reference the others are tested against.
- ``heap-merge``: a heap of adjacent pairs with lazy invalidation, O(n log n).
- ``backtrack``: GitHub ``bpe``'s longest-match with pair-validity backtracking, O(n).

Each takes a :class:`MergeTables` and exposes ``encode_piece(piece: bytes) -> list[int]``.

>>> from wordsplit import load_vocab
>>> get_encoder("heap-merge")(MergeTables(load_vocab("qwen3"))).encode_piece(b"hello")
[14990]
"""

from __future__ import annotations

from ..registry import Registry
from ..tables import BacktrackTables, MergeTables

ENCODERS: Registry = Registry("encoder")
register_encoder = ENCODERS.register

from . import backtrack, buffer_sweep, heap_merge  # noqa: E402  (they register themselves)


def get_encoder(name: str) -> type:
    """The Python encoder class registered as ``name``; unknown names list the known ones."""
    return ENCODERS.get(name)


__all__ = ["ENCODERS", "register_encoder", "get_encoder", "MergeTables", "BacktrackTables",
           "backtrack", "buffer_sweep", "heap_merge"]
