"""Turn a merge list (HF tokenizer.json, merges.txt, GGUF) into a Vocab.

Files that list merges (``"Ġ t"``) define BPE by *pair rank*: merge the adjacent pair that
comes first in the list. tiktoken files define it by *token rank*: merge the adjacent pair
whose concatenation has the lowest id. The two rules give the same ids when the merge list
is ordered by the id of the token each merge makes, every non-byte token is made by exactly
one merge, and token-rank BPE makes each token from the very pair its merge lists (true for
Qwen3, GPT-2 and every OpenAI-derived file). Then the Vocab is rank-based, which all
encoders (and the fast native tables) handle; otherwise the Vocab keeps the pair-ranked
table and the encoders follow it, as HF does. (With merges ``b c``, ``a b``, ``ab c``,
token-rank BPE makes ``abc`` from ``a`` + ``bc``, a pair HF never merges.)

>>> from wordsplit.formats.merges import merges_are_rank_ordered
>>> ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256, b"abc": 257}
>>> merges_are_rank_ordered(ranks, [(b"a", b"b"), (b"ab", b"c")])
True
>>> ranks = {bytes([b]): b for b in range(256)} | {b"bc": 256, b"ab": 257, b"abc": 258}
>>> merges_are_rank_ordered(ranks, [(b"b", b"c"), (b"a", b"b"), (b"ab", b"c")])
False
"""

from __future__ import annotations

from typing import Mapping, Optional, Sequence

from ..errors import VocabFormatError
from . import native as native_readers


def merges_are_rank_ordered(ranks: Mapping[bytes, int], merges: Sequence[tuple[bytes, bytes]]) -> bool:
    """True when token-rank BPE on ``ranks`` equals pair-rank BPE on ``merges`` (see module doc)."""
    listed = []  # each merge's ids: the token it makes, then its two parts
    last = -1
    for left, right in merges:
        merged = ranks.get(left + right)
        if merged is None or merged <= last:
            return False
        # Both parts must exist before the merge that uses them, as BPE training guarantees (a
        # part missing from the vocabulary is reported by pair_ranked_merges).
        parts = (ranks.get(left, merged), ranks.get(right, merged))
        if parts[0] >= merged or parts[1] >= merged:
            return False
        listed.append((merged, parts))
        last = merged
    # The merged ids rise strictly, so each merge makes a token of its own.
    multi_byte = sum(1 for piece in ranks if len(piece) > 1)
    if len(listed) != multi_byte:
        return False
    # Ids far sparser than the tokens, or negative: not taken as rank-ordered (no table by id).
    size = max(ranks.values(), default=-1) + 1
    if size > 2 * len(ranks) + 65_536 or any(i < 0 for i in ranks.values()):
        return False
    by_id: list[bytes | None] = [None] * size
    for piece, i in ranks.items():
        by_id[i] = piece
    splits = rank_pairs(by_id)
    return all(splits[merged] == parts for merged, parts in listed)


def _rank_bpe_pair(piece: bytes, ranks: dict[bytes, int], below: int) -> Optional[tuple[bytes, bytes]]:
    """The last two parts token-rank BPE leaves of ``piece`` using only tokens with id
    < ``below`` (None if it does not end in exactly two parts)."""
    parts = [piece[i:i + 1] for i in range(len(piece))]
    while len(parts) > 2:
        best = None
        for i in range(len(parts) - 1):
            rank = ranks.get(parts[i] + parts[i + 1])
            if rank is not None and rank < below and (best is None or rank < best[0]):
                best = (rank, i)
        if best is None:
            return None
        i = best[1]
        parts[i:i + 2] = [parts[i] + parts[i + 1]]
    return (parts[0], parts[1]) if len(parts) == 2 else None


def rank_pairs(tokens: Sequence[Optional[bytes]], *, native: bool = True) -> list[Optional[tuple[int, int]]]:
    """For each id of ``tokens`` (bytes by id, None for specials): the ``(left id, right id)``
    token-rank BPE ends with on the token's bytes using only lower ids, or None (single bytes,
    and tokens it cannot make from two). The native core does the same when built and ``native``.

    >>> rank_pairs([b"a", b"b", b"c", b"bc", b"ab", b"abc"], native=False)
    [None, None, None, (1, 2), (0, 1), (0, 3)]
    """
    pairs = native_readers.rank_pairs(tokens) if native else None
    if pairs is not None:
        return pairs
    ranks = {piece: i for i, piece in enumerate(tokens) if piece is not None}
    pairs: list[Optional[tuple[int, int]]] = []
    for i, piece in enumerate(tokens):
        pair = None if piece is None or len(piece) < 2 else _rank_bpe_pair(piece, ranks, i)
        pairs.append(None if pair is None else (ranks[pair[0]], ranks[pair[1]]))
    return pairs


def pair_ranked_merges(
    ranks: Mapping[bytes, int], merges: Sequence[tuple[bytes, bytes]], source: str
) -> dict[tuple[int, int], int]:
    """The ``(left id, right id) → merge rank`` table; VocabFormatError for a merge of unknown tokens."""
    table: dict[tuple[int, int], int] = {}
    for rank, (left, right) in enumerate(merges):
        if left not in ranks or right not in ranks:
            missing = left if left not in ranks else right
            raise VocabFormatError(f"{source}: merge #{rank} uses {missing!r}, which is not in the vocabulary")
        if left + right not in ranks:
            raise VocabFormatError(f"{source}: merge #{rank} makes {left + right!r}, which is not in the vocabulary")
        # A repeated pair keeps its last rank: HF collects the list into a map in order.
        table[(ranks[left], ranks[right])] = rank
    return table
