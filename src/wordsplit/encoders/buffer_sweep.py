"""``buffer-sweep``: the reference BPE encoder, written to be read rather than to be fast.

After every merge it sweeps the whole buffer of symbols for the adjacent pair of lowest
priority (leftmost on ties) and merges it, until no pair merges: O(n²) in the piece length.
Every other encoder, Python or native, is tested against it.

>>> from wordsplit import load_vocab
>>> BufferSweepEncoder(MergeTables(load_vocab("cl100k_base"))).encode_piece(b"wordsplit")
[5880, 2344]
"""

from __future__ import annotations

from . import register_encoder
from ..native_names import ENCODER_ALIASES
from ..tables import MergeTables


@register_encoder("buffer-sweep", aliases=ENCODER_ALIASES["buffer-sweep"])
class BufferSweepEncoder:
    """Merges the lowest-priority adjacent pair, rescanning after each merge: O(n²)."""


    def __init__(self, tables: MergeTables) -> None:
        self.tables = tables

    def encode_piece(self, piece: bytes) -> list[int]:
        whole = self.tables.whole(piece)
        if whole is not None:
            return [whole]
        return [self.tables.ranks[part] for part in self.merge(piece)]

    def merge(self, piece: bytes, trace=None) -> list[bytes]:
        """The final symbols of ``piece``; ``trace(parts, candidates, winner)`` sees each pass."""
        pair_rank = self.tables.pair_rank
        parts = [piece[i:i + 1] for i in range(len(piece))]
        while len(parts) > 1:
            candidates = [(i, pair_rank(parts[i], parts[i + 1])) for i in range(len(parts) - 1)]
            ranked = [(rank, i) for i, rank in candidates if rank is not None]
            if not ranked:
                break
            _, best = min(ranked)  # lowest priority, then leftmost
            if trace is not None:
                trace(list(parts), candidates, best)
            parts[best:best + 2] = [parts[best] + parts[best + 1]]
        return parts
