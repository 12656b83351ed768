"""``heap-merge``: BPE with a heap of adjacent pairs, O(n log n) per piece.

Symbols form a doubly linked list over the piece's bytes. Every adjacent pair that can merge
sits in a min-heap keyed by (priority, start); merging a pair invalidates the entries of its
neighbours lazily: a popped entry is used only if both of its symbols still have the extents
it was pushed with. Leftmost-first on ties, exactly like the reference.

>>> from wordsplit import load_vocab
>>> HeapMergeEncoder(MergeTables(load_vocab("cl100k_base"))).encode_piece(b"wordsplit")
[5880, 2344]
"""

from __future__ import annotations

import heapq

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
        n = len(piece)
        if n == 1:
            return [tables.ranks[piece]]
        pair_rank = tables.pair_rank
        # Symbol k covers piece[k:end[k]]; prev/next link live symbols by their start.
        end = list(range(1, n + 1))
        prev = list(range(-1, n - 1))
        nxt = list(range(1, n + 1))  # n means "no next symbol"
        heap: list[tuple[int, int, int, int]] = []

        def push(left: int) -> None:
            right = nxt[left]
            if right < n:
                rank = pair_rank(piece[left:end[left]], piece[right:end[right]])
                if rank is not None:
                    heapq.heappush(heap, (rank, left, end[left], end[right]))

        for k in range(n - 1):
            push(k)
        while heap:
            _, left, left_end, right_end = heapq.heappop(heap)
            # Stale if the left symbol was absorbed or grew, or its right neighbour changed.
            if end[left] != left_end or left_end >= n or end[left_end] != right_end or prev[left_end] != left:
                continue
            right = left_end
            end[left] = end[right]
            end[right] = -1  # dead
            nxt[left] = nxt[right]
            if nxt[right] < n:
                prev[nxt[right]] = left
            if prev[left] >= 0:
                push(prev[left])
            push(left)
        ids = []
        k = 0
        while k < n:
            ids.append(tables.ranks[piece[k:end[k]]])
            k = end[k]
        return ids
