"""MergeTables: the one precomputed dictionary every encoder of a vocabulary reads.

It answers the only question BPE asks: "if these two adjacent symbols merge, at what
priority, and into which token?" Under the *rank-based* rule (tiktoken; HF files whose merge
list is ordered by merged id) the priority is the merged token's id. Under the *pair-ranked*
rule (other HF files) it is the position of the pair in the merge list. The backtracking
encoder needs more (each token's canonical split and a pair-validity check); those tables are
built on first use.

>>> from wordsplit import load_vocab
>>> tables = MergeTables(load_vocab("qwen3"))
>>> tables.pair_rank(b"e", b"l")  # (e,l) merges into token 301; rank = id
301
"""

from __future__ import annotations

import weakref
from typing import Optional

from .vocab import Vocab


class MergeTables:
    """Merge priorities of one vocabulary: what every encoder reads (the encoder contract).

    Attributes:
        vocab: the :class:`~wordsplit.vocab.Vocab`.
        ranks: bytes of every BPE token → its id (a read-only mapping).

    Methods ``pair_rank(left, right)`` (the merge priority of two adjacent symbols, lower
    first, or None) and ``whole(piece)`` (the id of a piece the vocabulary looks up in one step,
    or None) are all an encoder needs: a BPE encoder merges the adjacent pair of lowest
    ``pair_rank`` (leftmost on ties) until none merges, after a ``whole`` lookup.
    :meth:`of` returns the tables of a vocabulary, built once and shared.
    """

    def __init__(self, vocab: Vocab) -> None:
        self.vocab = vocab
        self.ranks = vocab.ranks
        self.pair_ranked = vocab.merges is not None
        self.whole_piece_lookup = vocab.whole_piece_lookup
        self._merges = vocab.merges
        self._backtrack: Optional[BacktrackTables] = None

    def pair_rank(self, left: bytes, right: bytes) -> Optional[int]:
        """The priority of merging ``left`` + ``right`` (lower first), or None if they never merge."""
        if self._merges is None:
            return self.ranks.get(left + right)
        return self._merges.get((self.ranks[left], self.ranks[right]))

    def whole(self, piece: bytes) -> Optional[int]:
        """The id of ``piece`` when the vocabulary encodes a whole-token piece in one lookup."""
        return self.ranks.get(piece) if self.whole_piece_lookup else None

    @classmethod
    def of(cls, vocab: Vocab) -> "MergeTables":
        """The tables of ``vocab``, built once per Vocab object and shared by its tokenizers
        (made again once no tokenizer holds them)."""
        tables = _SHARED.get(id(vocab))
        if tables is None or tables.vocab is not vocab:
            tables = _SHARED[id(vocab)] = cls(vocab)
        return tables

    @property
    def backtrack(self) -> "BacktrackTables":
        if self._backtrack is None:
            self._backtrack = BacktrackTables(self)
        return self._backtrack


# The tables of each Vocab object (by id), while a tokenizer holds them. Weak values, not weak
# keys: the tables hold their Vocab, so a weak-key entry's value would keep its key alive and
# no Vocab would ever be freed. The id cannot be reused while the tables live, as they hold
# the Vocab.
_SHARED: "weakref.WeakValueDictionary[int, MergeTables]" = weakref.WeakValueDictionary()


class BacktrackTables:
    """The tables of GitHub's ``bpe`` crate (github.com/github/rust-gems, its byte_pair_encoding.rs).

    ``split[t]`` is the pair of tokens whose merge makes ``t`` (``(t, t)`` for a token BPE
    never makes), ``pair_lookup[(a, b)]`` the token BPE makes from the adjacent pair, and
    ``next_prefix[t]`` the longest token that is a strict prefix of ``t``. They are derived in
    rank order: a token's split is the longest-prefix pair that is itself a valid BPE pair.
    Needs rank-based merges (priority = id).
    """

    def __init__(self, tables: MergeTables) -> None:
        if tables.pair_ranked:
            from .errors import UnsupportedTokenizerError

            raise UnsupportedTokenizerError(
                f"{tables.vocab.name}: the backtrack encoder needs merges ordered by merged id; "
                "this vocabulary is pair-ranked, use encoder='heap-merge'"
            )
        ranks = tables.ranks
        self.ranks = ranks
        self.token_len = {i: len(piece) for piece, i in ranks.items()}
        self.max_len = max(self.token_len.values())
        by_id = sorted((i, piece) for piece, i in ranks.items())
        self.next_prefix: dict[int, Optional[int]] = {}
        for i, piece in by_id:
            self.next_prefix[i] = next(
                (ranks[piece[:n]] for n in range(len(piece) - 1, 0, -1) if piece[:n] in ranks), None
            )
        self.split: dict[int, tuple[int, int]] = {}
        self.pair_lookup: dict[tuple[int, int], int] = {}
        for i, piece in by_id:
            first = self.next_prefix[i]
            while first is not None:
                second = ranks.get(piece[self.token_len[first]:])
                if second is not None and first < i and second < i and self.is_valid_pair(first, second):
                    self.pair_lookup[(first, second)] = i
                    self.split[i] = (first, second)
                    break
                first = self.next_prefix[first]
            else:
                self.split[i] = (i, i)

    def is_valid_pair(self, left: int, right: int) -> bool:
        """Would BPE leave ``left`` and ``right`` adjacent, unmerged, at their boundary?

        Unwinds both tokens' merges from the last one backwards and checks that no pair
        straddling the boundary would have merged before the merges that made them.
        """
        limit = None  # the largest rank that may still merge across the boundary (None: any)
        split, pair_lookup = self.split, self.pair_lookup
        while True:
            combined = pair_lookup.get((left, right))
            if combined is not None and (limit is None or combined < limit):
                return False
            if left > right:
                limit = left
                left = split[left][1]
                if left == limit:
                    limit = right + 1
                    right = split[right][0]
                    if right + 1 == limit:
                        return True
            else:
                limit = right + 1
                right = split[right][0]
                if right + 1 == limit:
                    limit = left
                    left = split[left][1]
                    if left == limit:
                        return True

    def longest_match(self, text: bytes, pos: int) -> Optional[int]:
        """The id of the longest token that starts ``text[pos:]``."""
        ranks = self.ranks
        for n in range(min(self.max_len, len(text) - pos), 0, -1):
            token = ranks.get(text[pos:pos + n])
            if token is not None:
                return token
        return None
