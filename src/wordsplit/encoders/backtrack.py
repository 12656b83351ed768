"""``backtrack``: the O(n) BPE of GitHub's ``bpe`` crate (github.com/github/rust-gems).

Walk the piece left to right taking the longest token that matches; keep it only if it
ends where a valid encoding may continue and if BPE would leave it next to the previous
token (:meth:`BacktrackTables.is_valid_pair`). Otherwise try the next shorter prefix token;
when none is left, drop the previous token and mark its end position as a dead end. The
result equals the reference because a BPE encoding is exactly the sequence of tokens whose
every adjacent pair is valid, and the greedy-longest walk finds it.

>>> from wordsplit import load_vocab
>>> BacktrackEncoder(MergeTables(load_vocab("cl100k_base"))).encode_piece(b"wordsplit")
[5880, 2344]
"""

from __future__ import annotations

from . import register_encoder
from ..native_names import ENCODER_ALIASES
from ..tables import MergeTables


@register_encoder("backtrack", aliases=ENCODER_ALIASES["backtrack"])
class BacktrackEncoder:
    """Longest match plus token-pair validity and backtracking: O(n) per piece."""


    def __init__(self, tables: MergeTables) -> None:
        self.tables = tables
        self.bt = tables.backtrack  # built on first use; raises for pair-ranked vocabularies

    def encode_piece(self, piece: bytes) -> list[int]:
        whole = self.tables.whole(piece)
        if whole is not None:
            return [whole]
        bt = self.bt
        token_len, next_prefix, valid = bt.token_len, bt.next_prefix, bt.is_valid_pair
        # reachable[p]: an encoding of piece[:p] may still end at p (cleared on dead ends).
        reachable = [True] * (len(piece) + 1)
        tokens: list[int] = []
        pos = 0
        token = bt.longest_match(piece, 0)
        while token is not None:
            last = tokens[-1] if tokens else None
            while True:
                end_pos = pos + token_len[token]
                if reachable[end_pos] and (last is None or valid(last, token)):
                    tokens.append(token)
                    pos = end_pos
                    token = bt.longest_match(piece, pos) if pos < len(piece) else None
                    break
                shorter = next_prefix[token]
                if shorter is not None:
                    token = shorter
                    continue
                # No token fits here: undo the previous one and never end there again.
                reachable[pos] = False
                tokens.pop()
                pos -= token_len[last]
                token = last
                break
        return tokens
