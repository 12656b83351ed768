"""A training result as a :class:`~wordsplit.vocab.Vocab`, and a Vocab's merge list.

HF encodes with *pair-ranked* merges (merge the pair listed first); wordsplit and tiktoken
with *token ranks* (merge the pair whose token has the lowest id). Trained merges are nearly
always such that the two agree: each merge makes a new token, in id order, and the pair of each
token is the one token-rank BPE finds when it encodes the token's bytes. Then the Vocab is
rank-based, and :func:`merge_list` recovers the merges from the ranks alone (as for any
tiktoken file). HF's trainer can also record a merge that makes a token that already exists
(two pairs spelling the same bytes) or the same pair twice; such a result is kept pair-ranked
(``Vocab.merges``), which wordsplit and tokenizer.json represent exactly and a ``.tiktoken``
file cannot.

>>> from wordsplit.training.bpe import train_bpe
>>> v = result_to_vocab(train_bpe({b"abab": 2}, vocab_size=258), pattern=r"\\S+", normalizer="none", name="t")
>>> v.merges is None, merge_list(v)
(True, [(b'a', b'b'), (b'ab', b'ab')])
"""

from __future__ import annotations


from ..errors import VocabFormatError
from ..formats.merges import rank_pairs
from ..vocab import Vocab
from .bpe import TrainResult


def hf_merges(result: TrainResult) -> list[tuple[int, int]]:
    """The merges as HF's model keeps them: one rank per pair (a repeated pair keeps its last
    position, as HF collects the list into a map), in rank order."""
    last = {(left, right): rank for rank, (left, right, _) in enumerate(result.merges)}
    return [pair for pair, _ in sorted(last.items(), key=lambda item: item[1])]


def is_rank_based(result: TrainResult, *, native: bool = True) -> bool:
    """True when token-rank BPE on the result's ids equals HF's pair-ranked BPE on its merges
    (see the module doc)."""
    made = [m[2] for m in result.merges]
    if any(b <= a for a, b in zip(made, made[1:])):  # a token made twice, or a pair merged twice
        return False
    pairs = rank_pairs(result.tokens, native=native)
    return all(pairs[new] == (left, right) for left, right, new in result.merges)


def result_to_vocab(result: TrainResult, *, pattern: str, normalizer: str, name: str, native: bool = True) -> Vocab:
    """The Vocab of a training result: rank-based when :func:`is_rank_based`, else pair-ranked
    with HF's merge table (and no whole-piece lookup, as HF's trained model has none).
    ``native=False`` checks in Python even when the core is built."""
    ranks = {piece: i for i, piece in enumerate(result.tokens) if piece is not None}
    specials = {text: i for i, text in enumerate(result.special_tokens)}
    if is_rank_based(result, native=native):
        return Vocab(name=name, ranks=ranks, pattern=pattern, special_tokens=specials, normalizer=normalizer,
                     source=f"{name} (trained)")
    table = {pair: rank for rank, pair in enumerate(hf_merges(result))}
    return Vocab(name=name, ranks=ranks, pattern=pattern, special_tokens=specials, normalizer=normalizer,
                 merges=table, whole_piece_lookup=False, source=f"{name} (trained)")


def merge_list(vocab: Vocab) -> list[tuple[bytes, bytes]]:
    """The merges of ``vocab`` in rank order, as byte pairs: its pair-ranked table, or else
    (rank-based) the pair token-rank BPE finds for each multi-byte token, in id order.

    Raises:
        VocabFormatError: a rank-based token that BPE on the lower ids cannot make from two tokens
            (then the vocabulary is not byte-level BPE as trained).
    """
    by_id = vocab.token_bytes
    if vocab.merges is not None:
        return [(by_id[l], by_id[r]) for (l, r), _ in sorted(vocab.merges.items(), key=lambda item: item[1])]
    tokens = [None] * vocab.n_vocab
    for piece, i in vocab.ranks.items():
        tokens[i] = piece
    pairs = []
    for i, pair in enumerate(rank_pairs(tokens)):
        if tokens[i] is None or len(tokens[i]) < 2:
            continue
        if pair is None:
            raise VocabFormatError(f"{vocab.name}: token {i} {tokens[i]!r} is not a merge of two lower tokens")
        pairs.append((tokens[pair[0]], tokens[pair[1]]))
    return pairs
