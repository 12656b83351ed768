"""Turn a merge list (HF tokenizer.json, merges.txt, GGUF) into a Vocab.

Files that list merges (``"Ġ t"``) define BPE by *pair rank*: merge the adjacent pair that
comes first in the list. tiktoken files define it by *token rank*: merge the adjacent pair
whose concatenation has the lowest id. The two rules give the same ids when the merge list
is ordered by the id of the token each merge makes and every non-byte token is made by
exactly one merge (true for Qwen3, GPT-2 and every OpenAI-derived file). Then the Vocab is
rank-based, which all encoders (and the fast native tables) handle; otherwise the Vocab keeps
the pair-ranked table and the encoders follow it, as HF does.

>>> from wordsplit.formats.merges import merges_are_rank_ordered
>>> ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256, b"abc": 257}
>>> merges_are_rank_ordered(ranks, [(b"a", b"b"), (b"ab", b"c")])
True
"""

from __future__ import annotations

from typing import Mapping, Sequence

from ..errors import VocabFormatError


def merges_are_rank_ordered(ranks: Mapping[bytes, int], merges: Sequence[tuple[bytes, bytes]]) -> bool:
    """True when token-rank BPE on ``ranks`` equals pair-rank BPE on ``merges`` (see module doc)."""
    made = set()
    last = -1
    for left, right in merges:
        merged = ranks.get(left + right)
        if merged is None or merged <= last:
            return False
        # Both parts must exist before the merge that uses them, as BPE training guarantees (a
        # part missing from the vocabulary is reported by pair_ranked_merges).
        if ranks.get(left, merged) >= merged or ranks.get(right, merged) >= merged:
            return False
        made.add(merged)
        last = merged
    multi_byte = sum(1 for piece in ranks if len(piece) > 1)
    return len(made) == multi_byte


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
