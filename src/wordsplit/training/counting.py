"""Counting words: documents → ``{word bytes: count}``, in shards that merge.

A *word* is one piece of the split pattern, as UTF-8 bytes, after the normalizer. BPE training
needs only the distinct words and their counts, so memory grows with the vocabulary of the
corpus, not with its size. :class:`WordCounts` is that table; two tables built on different
parts of a corpus (other threads, processes or machines) merge with ``+=`` into the table of
the whole, so counting can be spread out and the merges learned once.

The pieces are HF's ``Split(pattern, behavior="isolated")`` pieces: the matches of the pattern
*and* the text between them (the patterns of real tokenizers match every character, so there
is none; a user's pattern may leave some, and HF keeps it as words).

It does not learn merges (:mod:`wordsplit.training.bpe`) or read files
(:mod:`wordsplit.training.sources`).

>>> counts = WordCounts()
>>> counts.add_pieces(["hello", " world", " hello"])
>>> other = WordCounts({b" world": 2})
>>> counts += other
>>> sorted(counts.items())
[(b' hello', 1), (b' world', 3), (b'hello', 1)]
"""

from __future__ import annotations

from collections import Counter
from itertools import islice
from typing import Callable, Iterable, Iterator, Mapping, Optional

from ..engines.arguments import without_surrogates


class WordCounts(Counter):
    """Word bytes → count; ``a += b`` merges the counts of two shards (a ``Counter``).

    >>> WordCounts({b"a": 1}) + WordCounts({b"a": 2, b"b": 1}) == WordCounts({b"a": 3, b"b": 1})
    True
    """

    def add_pieces(self, pieces: Iterable[str]) -> None:
        """Count each piece (a ``str``) once, as its UTF-8 bytes."""
        self.update(piece.encode("utf-8") for piece in pieces)


def pieces_of(spanner, text: str) -> Iterator[str]:
    """The pieces of ``text`` as HF's ``Split(..., "isolated")`` makes them: the spanner's
    pieces, plus the text between them when the spanner can say where its pieces are.

    >>> from wordsplit.spanners import RegexSpanner
    >>> list(pieces_of(RegexSpanner(r"[a-z]+"), "ab, cd"))
    ['ab', ', ', 'cd']
    """
    spans = getattr(spanner, "spans", None)
    if spans is None or getattr(spanner, "drops_text", False):
        # A plug-in spanner's pieces cover the text by contract; a spanner that drops text
        # (an HF Whitespace program) gives the pieces as encoded, the dropped text left out.
        yield from spanner.split(text)
        return
    position = 0
    for start, end in spans(text):
        if start > position:
            yield text[position:start]
        if end > start:
            yield text[start:end]
        position = end
    if position < len(text):
        yield text[position:]


def count_words(
    documents: Iterable[str],
    spanner,
    normalize: Optional[Callable[[str], str]] = None,
    counts: Optional[WordCounts] = None,
    on_document: Optional[Callable[[str], None]] = None,
    max_words: Optional[int] = None,
) -> WordCounts:
    """Count the words of ``documents`` with ``spanner`` (after ``normalize``) into ``counts``
    (a new table by default). ``on_document`` is called with each document (for progress).
    With ``max_words``, only the first ``max_words`` words are counted (a document may be cut
    between two words) and no document after them is read.

    >>> from wordsplit.spanners import RegexSpanner
    >>> sorted(count_words(["a b a"], RegexSpanner(r" ?[a-z]")).items())
    [(b' a', 1), (b' b', 1), (b'a', 1)]
    >>> sorted(count_words(["a b", "c d"], RegexSpanner(r" ?[a-z]"), max_words=3).items())
    [(b' b', 1), (b'a', 1), (b'c', 1)]
    """
    counts = WordCounts() if counts is None else counts
    left = max_words
    for text in documents:
        if left == 0:
            break
        if on_document is not None:
            on_document(text)
        text = without_surrogates(text)
        if normalize is not None:
            text = normalize(text)
        pieces = pieces_of(spanner, text)
        if left is None:
            counts.add_pieces(pieces)
            continue
        taken = list(islice(pieces, left))
        counts.add_pieces(taken)
        left -= len(taken)
    return counts


def as_word_counts(table: Mapping[bytes, int]) -> WordCounts:
    """A :class:`WordCounts` of ``table`` (a mapping of word bytes to positive counts)."""
    return table if isinstance(table, WordCounts) else WordCounts(table)
