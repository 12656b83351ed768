"""``heap-merge``: BPE with a heap of adjacent pairs, O(n log n) per piece.

Symbols form a doubly linked list over the piece's bytes. Every adjacent pair that can merge
sits in a min-heap keyed by (priority, start); merging a pair invalidates the entries of its
neighbours lazily: a popped entry is used only if both of its symbols still have the extents
it was pushed with. Leftmost-first on ties, exactly like the reference. The loop is
:func:`merge_spans`, which the SentencePiece encoders (:mod:`.score_merge`) run too.

>>> from wordsplit import load_vocab
>>> HeapMergeEncoder(MergeTables(load_vocab("cl100k_base"))).encode_piece(b"wordsplit")
[5880, 2344]
"""

from __future__ import annotations

import heapq
from typing import Callable, Optional

from . import register_encoder
from ..native_names import ENCODER_ALIASES
from ..tables import MergeTables


@register_encoder("heap-merge", aliases=ENCODER_ALIASES["heap-merge"])
class HeapMergeEncoder:
    """Merges the lowest-priority pair first via a heap: O(n log n) per piece."""


    def __init__(self, tables: MergeTables) -> None:
        self.tables = tables

    def encode_piece(self, piece: bytes) -> list[int]:
        tables = self.tables
        whole = tables.whole(piece)
        if whole is not None:
            return [whole]
        if len(piece) == 1:
            return [tables.ranks[piece]]
        pair_rank = tables.pair_rank
        spans = merge_spans(len(piece), lambda start, mid, end: pair_rank(piece[start:mid], piece[mid:end]))
        return [tables.ranks[piece[start:end]] for start, end in spans]


def merge_spans(n: int, rank_of: Callable[[int, int, int], Optional[int]],
                merged: Optional[Callable[[int, int, int], None]] = None) -> list[tuple[int, int]]:
    """BPE over ``n`` symbols with a heap and lazy invalidation: symbol ``k`` starts as
    ``[k, k + 1)``; two adjacent symbols ``[start, mid)`` and ``[mid, end)`` merge at priority
    ``rank_of(start, mid, end)`` (None: never), the lowest first, the leftmost on ties, until
    no pair is left; ``merged(start, mid, end)`` is told each merge. ``rank_of`` is asked about
    each pair as it becomes adjacent, in the same order every time (what SentencePiece's
    unused pieces depend on). Returns the final symbols' ``(start, end)``, in order.

    >>> merge_spans(4, lambda a, m, b: {(0, 1, 2): 0, (2, 3, 4): 1, (0, 2, 4): 2}.get((a, m, b)))
    [(0, 4)]
    """
    # Symbol k covers [k, end[k]); an absorbed one has end -1. prev links the live ones backwards.
    end = list(range(1, n + 1))
    prev = list(range(-1, n - 1))
    heap: list[tuple[int, int, int, int]] = []

    def propose(left: int) -> None:
        right = end[left]
        if right < n:
            rank = rank_of(left, right, end[right])
            if rank is not None:
                heapq.heappush(heap, (rank, left, right, end[right]))

    for k in range(n - 1):
        propose(k)
    while heap:
        _, left, right, right_end = heapq.heappop(heap)
        # Stale if the left symbol was absorbed or grew, or its right neighbour changed.
        if end[left] != right or end[right] != right_end:
            continue
        end[left] = right_end
        end[right] = -1
        if right_end < n:
            prev[right_end] = left
        if merged is not None:
            merged(left, right, right_end)
        if prev[left] >= 0:
            propose(prev[left])
        propose(left)
    spans = []
    k = 0
    while k < n:
        spans.append((k, end[k]))
        k = end[k]
    return spans
