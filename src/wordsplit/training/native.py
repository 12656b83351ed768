"""The native backend of training: counting words with the native scanners, and the native
trainer (``crates/wordsplit/src/train.rs``), behind the same interfaces as the Python ones.

Counting streams: documents are handed to the core a batch at a time (about
:data:`BATCH_BYTES` of text), each batch counted on all cores with the GIL released, so memory
holds one batch of text plus the table of distinct words.
"""

from __future__ import annotations

from itertools import islice
from typing import Callable, Iterable, Optional, Sequence

from ..engines.arguments import without_surrogates
from ..formats.bytelevel import token_bytes
from ..native_names import SCANNER_PATTERNS
from ..engines.native import is_word_counter, word_counter
from .bpe import TrainResult, initial_tokens, special_merge_error

BATCH_BYTES = 1 << 20
SLICE_DOCUMENTS = 256
NATIVE_NORMALIZERS = ("none", "nfc")


def native_can_count(spanner: str, pattern: str, normalizer: str) -> bool:
    """True when the core counts this pattern itself (a native scanner, a native normalizer)."""
    return spanner in SCANNER_PATTERNS and pattern in SCANNER_PATTERNS[spanner] and normalizer in NATIVE_NORMALIZERS


def _batches(documents: Iterable[str]) -> Iterable[list[str]]:
    """Lists of documents of about :data:`BATCH_BYTES` (taken a slice at a time: a Python step
    per document would cost as much as counting it)."""
    documents = iter(documents)
    batch, size = [], 0
    while True:
        chunk = list(islice(documents, SLICE_DOCUMENTS))
        if not chunk:
            break
        batch += chunk
        size += sum(map(len, chunk))
        if size >= BATCH_BYTES:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def count_native(documents: Iterable[str], *, pattern: str, normalizer: str, num_threads: Optional[int] = None,
                 on_chars: Optional[Callable[[int], None]] = None, max_words: Optional[int] = None):
    """The native word table of ``documents``, counted by the native scanner of ``pattern``
    (``WordCounts(dict(table.items()))`` is its Python form; :func:`train_native` takes either).
    With ``max_words``, the first ``max_words`` words only, as :func:`.counting.count_words`
    counts them (reading stops after the batch where they end)."""
    counter = word_counter(pattern, normalizer)
    left = max_words
    for batch in _batches(documents):
        try:
            counted = counter.add_texts(batch, num_threads, left)
        except UnicodeEncodeError:  # lone surrogates: fixed as encode fixes them
            counted = counter.add_texts([without_surrogates(text) for text in batch], num_threads, left)
        if on_chars is not None:
            on_chars(sum(map(len, batch)))
        if left is not None:
            left -= counted
            if left == 0:
                break
    return counter


def train_native(counts, *, vocab_size: int, special_tokens: Sequence[str] = (), min_frequency: int = 0,
                 max_token_length: Optional[int] = None,
                 progress: Optional[Callable[[int, int], None]] = None) -> TrainResult:
    """:func:`wordsplit.training.bpe.train_bpe`'s result, learned by the native trainer."""
    specials, _ = initial_tokens(special_tokens)
    if is_word_counter(counts):
        counter = counts
    else:
        counter = word_counter()
        counter.add_counts(list(counts.items()))
    try:
        tokens, merges = counter.train(vocab_size, [token_bytes(s) for s in specials], min_frequency,
                                       max_token_length, progress)
    except ValueError as exc:
        index = int(str(exc).rsplit(" ", 1)[1])
        raise special_merge_error(specials[index]) from None
    return TrainResult(special_tokens=specials, tokens=tuple(tokens), merges=tuple(merges))


