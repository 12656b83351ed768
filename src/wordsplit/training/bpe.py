"""The reference BPE trainer: word counts → merges, with HuggingFace ``BpeTrainer``'s exact rules.

This is readable Python, the specification the native trainer (``crates/wordsplit/src/train.rs``) is
tested against. It follows HF ``tokenizers`` (``models/bpe/trainer.rs``) step for step, so that
the merges and the ids are the same as HF's, ties and corner cases included:

1. The vocabulary starts with the special tokens, in the given order (a repeated one once),
   then the 256 byte tokens in the order of their byte-level characters' code points (HF sorts
   its alphabet by code point, which is GPT-2's byte order:
   :data:`~wordsplit.formats.bytelevel.BYTE_ORDER`).
2. Every distinct word (a piece of the split pattern, as bytes) is a list of byte-token ids,
   and every adjacent pair is counted, weighted by the word's count.
3. A max-heap holds the candidate pairs, ordered by count, then by the *smaller* pair
   ``(left id, right id)`` first. Its entries are refreshed lazily: an entry whose count is out
   of date goes back in with the current count. Each entry carries the words it came from.
4. The best pair is merged into a new token (the concatenation; if that byte string is already
   token, its id is reused and the vocabulary does not grow, but the merge is still recorded;
   if it is the text of a special token, that is an error here, see below) in the entry's
   words only; the pairs around each merged occurrence change counts, and pairs
   that gained occurrences are pushed again with the words where they did.
5. Training stops when the vocabulary has ``vocab_size`` tokens, when no pair is left, or when
   the best count is below ``min_frequency`` (or below 1).

Special tokens are not looked for in the training text (HF's trainer splits them like any
text). A special token whose text is a single byte-level character would take that byte's
place, and a merge that makes a special token's text would get the special's id: no vocabulary
file can hold either, so both raise :class:`~wordsplit.errors.TrainingInputError`.

``max_token_length`` is counted in bytes (HF counts characters of the byte-level string, one
per byte). A pair of two single bytes is always a candidate; a pair formed by a merge becomes
one only if its two tokens together are *shorter* than ``max_token_length`` (HF's ``<``), so
with a limit of ``n`` the merged tokens longer than 2 bytes have at most ``n - 1`` bytes.

It does not read text or split it into words (:mod:`wordsplit.training.counting` does), and it does
not build a :class:`~wordsplit.vocab.Vocab` (:func:`wordsplit.training.train` does).

>>> result = train_bpe({b"hug": 10, b"pug": 5, b"pun": 12, b"bun": 4, b"hugs": 5}, vocab_size=259)
>>> [result.tokens[i] for _, _, i in result.merges]
[b'ug', b'un', b'hug']
"""

from __future__ import annotations

import heapq
import itertools
from dataclasses import dataclass
from typing import Callable, Mapping, Optional, Sequence

from ..errors import TrainingInputError
from ..formats.bytelevel import BYTE_ORDER, token_bytes

# How often (in merges) the progress callback is called.
PROGRESS_EVERY = 64


@dataclass(frozen=True)
class TrainResult:
    """What training learned.

    Attributes:
        special_tokens: the special tokens, id = position (repeats dropped).
        tokens: the bytes of every BPE token by id; the ids of the special tokens hold ``None``.
        merges: ``(left id, right id, merged id)`` in the order they were learned (a pair can
            appear twice, and two pairs can make the same token: see the module doc).
    """

    special_tokens: tuple[str, ...]
    tokens: tuple[Optional[bytes], ...]
    merges: tuple[tuple[int, int, int], ...]


def initial_tokens(special_tokens: Sequence[str]) -> tuple[tuple[str, ...], list[Optional[bytes]]]:
    """The specials (repeats dropped, order kept) and the token table before any merge:
    ``None`` for each special, then the 256 single bytes in HF's order.

    >>> specials, tokens = initial_tokens(["<s>", "<s>", "</s>"])
    >>> specials, tokens[2], tokens[2 + 255]
    (('<s>', '</s>'), b'!', b'\\xad')
    """
    specials = tuple(dict.fromkeys(special_tokens))
    return specials, [None] * len(specials) + [bytes([b]) for b in BYTE_ORDER]


def special_merge_error(special: str) -> TrainingInputError:
    """The error for a merge that makes the text of a special token (HF would give the merge the
    special's id, which no vocabulary file can hold)."""
    return TrainingInputError(
        f"the corpus merges into the text of the special token {special!r}: HF would give that merge the "
        "special token's id, which no vocabulary file can hold; remove the literal from the training text "
        "or use a split pattern that cuts it"
    )


def _merge_word(word: list[int], left: int, right: int, new: int, lengths: list[int],
                max_length: float) -> list[tuple[tuple[int, int], int]]:
    """Merge every ``left right`` in ``word`` (in place, left to right) and return the pair
    count changes, exactly as HF's ``Word::merge`` lists them: ``-1`` for each pair an occurrence
    breaks, ``+1`` for each pair it makes when the two tokens are shorter than ``max_length``."""
    changes = []
    i = 0
    while i < len(word):
        if word[i] == left and i + 1 < len(word) and word[i + 1] == right:
            merged_length = lengths[left] + lengths[right]
            if i > 0:
                changes.append(((word[i - 1], left), -1))
                if lengths[word[i - 1]] + merged_length < max_length:
                    changes.append(((word[i - 1], new), 1))
            word[i:i + 2] = [new]
            if i < len(word) - 1:
                changes.append(((right, word[i + 1]), -1))
                if lengths[word[i + 1]] + merged_length < max_length:
                    changes.append(((new, word[i + 1]), 1))
        i += 1
    return changes


def train_bpe(
    word_counts: Mapping[bytes, int],
    *,
    vocab_size: int,
    special_tokens: Sequence[str] = (),
    min_frequency: int = 0,
    max_token_length: Optional[int] = None,
    progress: Optional[Callable[[int, int], None]] = None,
) -> TrainResult:
    """Learn merges from ``word_counts`` (word bytes → count) until the vocabulary has
    ``vocab_size`` tokens, specials included (see the module doc for the rules).

    Args:
        progress: called as ``progress(tokens so far, vocab_size)`` now and then.

    >>> r = train_bpe({b"aaaa": 3, b"ab": 1}, vocab_size=258, special_tokens=["<s>"])
    >>> r.merges, r.tokens[257]
    (((65, 65, 257),), b'aa')
    """
    specials, tokens = initial_tokens(special_tokens)
    token_id = {piece: i for i, piece in enumerate(tokens) if piece is not None}
    # HF keys its vocabulary by byte-level text, where a special token's text is a token too.
    for i, special in enumerate(specials):
        if token_bytes(special) is not None:
            token_id.setdefault(token_bytes(special), i)
    lengths = [len(piece) if piece is not None else 0 for piece in tokens]
    max_length = float("inf") if max_token_length is None else max_token_length
    n_tokens = len(tokens)  # the vocabulary size so far, specials included

    words = [[token_id[bytes([b])] for b in word] for word in word_counts]
    counts = list(word_counts.values())

    # Count every adjacent pair, weighted by the word's count, and where it occurs.
    pair_counts: dict[tuple[int, int], int] = {}
    where: dict[tuple[int, int], set[int]] = {}
    for w, word in enumerate(words):
        for pair in zip(word, word[1:]):
            pair_counts[pair] = pair_counts.get(pair, 0) + counts[w]
            where.setdefault(pair, set()).add(w)

    # The max-heap as heapq's min-heap: (-count, left, right, tiebreak, words). The tiebreak
    # (push order) only stops heapq from comparing the sets; entries of equal count and pair
    # give the same result in either order.
    tiebreak = itertools.count()
    heap = [(-pair_counts[pair], *pair, next(tiebreak), ws) for pair, ws in where.items() if pair_counts[pair] > 0]
    heapq.heapify(heap)

    merges: list[tuple[int, int, int]] = []
    while n_tokens < vocab_size and heap:
        neg_count, left, right, _, ws = heapq.heappop(heap)
        count = pair_counts[(left, right)]
        if -neg_count != count:  # out of date: back in with the current count
            heapq.heappush(heap, (-count, left, right, next(tiebreak), ws))
            continue
        if count < 1 or count < min_frequency:
            break
        piece = tokens[left] + tokens[right]
        new = token_id.get(piece)
        if new is not None and new < len(specials):
            raise special_merge_error(specials[new])
        if new is None:
            new = len(tokens)
            tokens.append(piece)
            lengths.append(len(piece))
            token_id[piece] = new
            n_tokens += 1
        merges.append((left, right, new))

        gained: dict[tuple[int, int], set[int]] = {}
        for w in ws:
            for pair, change in _merge_word(words[w], left, right, new, lengths, max_length):
                pair_counts[pair] = pair_counts.get(pair, 0) + change * counts[w]
                if change > 0:
                    gained.setdefault(pair, set()).add(w)
        for pair, gained_words in gained.items():
            if pair_counts[pair] > 0:
                heapq.heappush(heap, (-pair_counts[pair], *pair, next(tiebreak), gained_words))
        if progress is not None and len(merges) % PROGRESS_EVERY == 0:
            progress(n_tokens, vocab_size)
    if progress is not None:
        progress(n_tokens, vocab_size)
    return TrainResult(special_tokens=specials, tokens=tuple(tokens), merges=tuple(merges))
