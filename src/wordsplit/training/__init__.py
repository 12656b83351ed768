"""Training: learn a byte-level BPE vocabulary from a corpus, exactly as HuggingFace does.

:func:`train` counts the words of the corpus (the pieces of a split pattern) and learns merges
with the rules of HF ``tokenizers``' ``BpeTrainer`` (a ``Split(pattern, "isolated")`` +
``ByteLevel(use_regex=False)`` pre-tokenizer, ``initial_alphabet=ByteLevel.alphabet()``), so
the vocabulary, the merges and therefore every token id are HF's. docs/training.md states the
rules with a worked example. The result is a :class:`~wordsplit.vocab.Vocab`: encode with it
at once, or write it with :func:`save_vocab` as ``tokenizer.json``, ``vocab.json`` +
``merges.txt`` and ``.tiktoken``.

The parts: :mod:`.sources` (documents from strings and files), :mod:`.counting` (words and
their counts, in shards), :mod:`.bpe` (the reference trainer), :mod:`.vocab` (the result as a
Vocab and its merge list), :mod:`.save` (the files); the native trainer is ``crates/wordsplit/src/train.rs``.

>>> from wordsplit import train, TokenizerOptions
>>> vocab = train(["the cat sat on the mat"] * 10, vocab_size=260, pattern="cl100k_base")
>>> [vocab.token_bytes[i] for i in range(256, 260)]
[b'at', b'he', b'the', b'cat']
>>> TokenizerOptions().build(vocab).encode(" the mat")
[220, 258, 220, 76, 256]
"""

from __future__ import annotations

import os
from typing import Callable, Mapping, Optional, Sequence, Union

from ..errors import TrainingInputError
from ..formats.bytelevel import token_bytes
from ..spec import Nfc, NoNormalizer, RegexSplit, Stage, normalizer_from_name

BACKENDS = ("auto", "native", "python")
DEFAULT_NAME = "trained"


def resolve_pattern(pattern: str) -> "tuple[str, str | Stage]":
    """``(pattern, normalizer)`` of ``pattern``: a registered vocabulary's name gives its split
    pattern and normalizer (a name, or a loaded vocabulary's normalizer stage); anything else is
    a regex, with no normalizer.

    >>> resolve_pattern(r"\\S+|\\s+")
    ('\\\\S+|\\\\s+', 'none')
    >>> resolve_pattern("qwen3")[1]
    'nfc'
    """
    from ..vocabs import VOCABS, load_vocab
    from ..vocabs.pretrained import ALIASES, PRETRAINED

    # A built-in name's facts are known without loading its 100k+ tokens (time and memory).
    entry = PRETRAINED.get(ALIASES.get(pattern, pattern))
    if entry is not None:
        return entry.pattern, entry.normalizer
    if pattern in VOCABS.names():
        vocab = load_vocab(pattern)
        if vocab.pattern is None:
            raise TrainingInputError(f"the vocabulary {pattern!r} is not split by a regex (its spanner is "
                                     f"{vocab.pipeline.spanner.kind}): give a split regex as the pattern")
        return vocab.pattern, vocab.normalizer
    return pattern, "none"


def _check_sampling(max_words, sample_rate, seed) -> None:
    if max_words is not None and (isinstance(max_words, bool) or not isinstance(max_words, int) or max_words < 1):
        raise TrainingInputError(f"max_words must be a positive int or None, not {max_words!r}")
    if isinstance(sample_rate, bool) or not isinstance(sample_rate, (int, float)) or not 0 < sample_rate <= 1:
        raise TrainingInputError(f"sample_rate must be a number in (0, 1], not {sample_rate!r} (1: every document)")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TrainingInputError(f"seed must be an int, not {seed!r}")


def _check_options(vocab_size, special_tokens, min_frequency, max_token_length, backend, num_threads) -> None:
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, int) or vocab_size < 1:
        raise TrainingInputError(f"vocab_size must be a positive int, not {vocab_size!r}")
    if isinstance(special_tokens, str):
        raise TrainingInputError(f"special_tokens is a list of strings; pass [{special_tokens!r}]")
    for token in special_tokens:
        if not isinstance(token, str) or not token:
            raise TrainingInputError(f"special tokens are non-empty strings, not {token!r}")
        spelled = token_bytes(token)
        if spelled is not None and len(spelled) == 1:
            raise TrainingInputError(
                f"the special token {token!r} is the byte-level spelling of byte 0x{spelled[0]:02x}, whose token "
                "it would replace; choose a longer special token"
            )
    if isinstance(min_frequency, bool) or not isinstance(min_frequency, int) or min_frequency < 0:
        raise TrainingInputError(f"min_frequency must be an int >= 0, not {min_frequency!r}")
    if max_token_length is not None and (
        isinstance(max_token_length, bool) or not isinstance(max_token_length, int) or max_token_length < 1
    ):
        raise TrainingInputError(f"max_token_length must be a positive int or None, not {max_token_length!r}")
    if backend not in BACKENDS:
        from ..errors import unknown_name

        raise unknown_name("backend", backend, BACKENDS)
    if num_threads is not None and (isinstance(num_threads, bool) or not isinstance(num_threads, int)
                                    or num_threads < 1):
        raise TrainingInputError(f"num_threads must be a positive int or None, not {num_threads!r}")


def resolve_backend(backend: str) -> str:
    """``"native"`` or ``"python"``: ``"auto"`` is native when the core is built (and
    ``WORDSPLIT_BACKEND`` does not force python).

    Raises:
        BackendUnavailableError: ``backend="native"`` without the compiled core.
    """
    from ..options import TokenizerOptions

    return TokenizerOptions(backend=backend).resolved_backend()


def train(
    source,
    *,
    vocab_size: int,
    pattern: str = "cl100k_base",
    special_tokens: Sequence[str] = (),
    min_frequency: int = 0,
    max_token_length: Optional[int] = None,
    normalizer: Optional[str] = None,
    spanner: str = "auto",
    backend: str = "auto",
    num_threads: Optional[int] = None,
    progress: bool = False,
    field: Optional[str] = None,
    column: Optional[str] = None,
    name: str = DEFAULT_NAME,
    max_words: Optional[int] = None,
    sample_rate: float = 1.0,
    seed: int = 0,
):
    """Learn a byte-level BPE vocabulary from ``source`` with HF ``BpeTrainer``'s rules.

    Args:
        source: an iterable of texts (``str``) and/or files (``pathlib.Path``), a single Path,
            or word counts already made (a :class:`~wordsplit.training.counting.WordCounts`
            or any mapping of word bytes to counts; see
            :mod:`wordsplit.training.sources` for the file formats: text, JSONL, Parquet, gzip).
        vocab_size: the size to reach: specials + 256 byte tokens + one token per merge.
        pattern: a registered vocabulary name (its split pattern, and its normalizer unless
            ``normalizer`` is given) or a split regex.
        special_tokens: the special tokens, ids 0, 1, ... in this order.
        min_frequency: stop when the best pair occurs fewer times.
        max_token_length: the longest merged token, in bytes, as HF counts it (docs/training.md).
        normalizer: a registered normalizer name (``"none"``, ``"nfc"``...); None: the
            vocabulary's when ``pattern`` names one, else ``"none"``.
        spanner: the spanner that splits words (``"auto"``: the native scanner registered for
            the pattern, else the regex; or any registered one).
        backend: ``"auto"``, ``"native"`` or ``"python"`` (the reference trainer).
        num_threads: threads for counting on the native backend (None: all cores).
        progress: True for progress bars on stderr (counting: characters/s; merging: merges/s, ETA).
        field: the JSONL field of the documents (default ``"text"``).
        column: the Parquet column of the documents (default ``"text"``).
        name: the name of the resulting Vocab.
        max_words: count only the first ``max_words`` words (pieces of the pattern) of the
            source, in order, and read no further (None: all). Faster on a huge corpus; the
            merges then reflect only its beginning (docs/training.md).
        sample_rate: keep each document with this probability (1: all), drawn with
            ``random.Random(seed)`` one document at a time (see
            :func:`~wordsplit.training.sources.sample_documents`); with ``max_words``, the
            first words of the sample.
        seed: the seed of ``sample_rate``'s draws: the same source, rate and seed give the
            same sample, so the same vocabulary.

    Returns:
        a :class:`~wordsplit.vocab.Vocab` (rank-based when the merges allow it, which is the
        usual case; see docs/training.md).

    Raises:
        TrainingInputError: a bad option or unreadable input.
        FileNotFoundError: a training file that does not exist.
        UnknownComponentError: an unknown backend, spanner or normalizer.

    >>> v = train(["low lower lowest"] * 3, vocab_size=259, pattern=r" ?[a-z]+", special_tokens=["<s>"])
    >>> v.special_tokens["<s>"], v.token_bytes[257], v.token_bytes[258]
    (0, b'lo', b'low')
    """
    from ..normalizers import NORMALIZERS
    from .counting import WordCounts
    from .progress import Progress
    from .vocab import result_to_vocab

    special_tokens = list(special_tokens)
    _check_options(vocab_size, special_tokens, min_frequency, max_token_length, backend, num_threads)
    _check_sampling(max_words, sample_rate, seed)
    split_pattern, default_normalizer = resolve_pattern(pattern)
    normalizer = default_normalizer if normalizer is None else normalizer
    NORMALIZERS.for_stage(_stage(normalizer))  # unknown names fail before any counting
    used_backend = resolve_backend(backend)
    with Progress(enabled=bool(progress)) as bars:
        if isinstance(source, Mapping):  # word counts already made (WordCounts, or a sum of them)
            if max_words is not None or sample_rate != 1:
                raise TrainingInputError("max_words and sample_rate apply when counting; these are word counts "
                                         "already made (pass them to count_source instead)")
            counts = _checked_counts(source)
        else:
            counts = _count(source, pattern=split_pattern, normalizer=normalizer, spanner=spanner,
                            backend=used_backend, num_threads=num_threads, field=field, column=column,
                            on_chars=bars.counted, max_words=max_words, sample_rate=sample_rate, seed=seed)
        bars.start_merging(vocab_size)
        result = learn(counts, vocab_size=vocab_size, special_tokens=special_tokens, min_frequency=min_frequency,
                       max_token_length=max_token_length, backend=used_backend, progress=bars.merged)
    return result_to_vocab(result, pattern=split_pattern, normalizer=normalizer, name=name,
                           native=used_backend == "native")


def _checked_counts(table: Mapping) -> "WordCounts":
    """``table`` as WordCounts, after checking it maps non-empty bytes to positive ints."""
    from .counting import WordCounts

    for word, count in table.items():
        if not isinstance(word, bytes) or not word:
            raise TrainingInputError(f"word counts map non-empty bytes to counts; got the key {word!r} "
                                     "(encode words with .encode('utf-8'))")
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise TrainingInputError(f"the count of {word!r} must be a positive int, not {count!r}")
    return table if isinstance(table, WordCounts) else WordCounts(table)


def count_source(source, *, pattern: str, normalizer: str = "none", spanner: str = "auto", backend: str = "auto",
                 num_threads: Optional[int] = None, field: Optional[str] = None, column: Optional[str] = None,
                 on_chars: Optional[Callable[[int], None]] = None, max_words: Optional[int] = None,
                 sample_rate: float = 1.0, seed: int = 0):
    """The :class:`~wordsplit.training.counting.WordCounts` of ``source`` (see :func:`train` for
    the arguments); build shards with it, merge them with ``+=`` and pass the sum to :func:`train`.

    >>> sorted(count_source(["a b a"], pattern=r" ?[a-z]").items())
    [(b' a', 1), (b' b', 1), (b'a', 1)]
    >>> sorted(count_source(["a b a"], pattern=r" ?[a-z]", max_words=2).items())
    [(b' b', 1), (b'a', 1)]
    """
    from .counting import WordCounts

    _check_sampling(max_words, sample_rate, seed)
    counts = _count(source, pattern=pattern, normalizer=normalizer, spanner=spanner, backend=backend,
                    num_threads=num_threads, field=field, column=column, on_chars=on_chars, max_words=max_words,
                    sample_rate=sample_rate, seed=seed)
    return counts if isinstance(counts, WordCounts) else WordCounts(dict(counts.items()))


def _stage(normalizer: "str | Stage") -> Stage:
    """A normalizer given by its name (``"none"``, ``"nfc"``, a plug-in's) or as a stage, as a stage."""
    return normalizer_from_name(normalizer) if isinstance(normalizer, str) else normalizer


def _count(source, *, pattern, normalizer, spanner, backend, num_threads, field, column, on_chars, max_words,
           sample_rate, seed):
    """:func:`count_source`, but a native count stays the core's table (no Python dict of it)."""
    from ..normalizers import NORMALIZERS
    from ..spanners import SPANNERS, spanner_for
    from .counting import count_words
    from .sources import iter_documents, sample_documents

    documents = iter_documents(source, field=field, column=column)
    if sample_rate != 1:
        documents = sample_documents(documents, sample_rate, seed)
    name = (spanner_for(RegexSplit(pattern)) or "regex") if spanner == "auto" else SPANNERS.canonical(spanner)
    stage = _stage(normalizer)
    native_name = {NoNormalizer(): "none", Nfc(): "nfc"}.get(stage)  # (the core's counter runs these)
    if resolve_backend(backend) == "native" and native_name is not None:
        from .native import count_native, native_can_count

        if native_can_count(name, pattern, native_name):
            return count_native(documents, pattern=pattern, normalizer=native_name, num_threads=num_threads,
                                on_chars=on_chars, max_words=max_words)
    normalize = None if isinstance(stage, NoNormalizer) else NORMALIZERS.for_stage(stage)
    on_document = None if on_chars is None else (lambda text: on_chars(len(text)))
    return count_words(documents, SPANNERS.get(name)(pattern), normalize, on_document=on_document,
                       max_words=max_words)


def learn(counts, *, vocab_size: int, special_tokens: Sequence[str] = (), min_frequency: int = 0,
          max_token_length: Optional[int] = None, backend: str = "auto",
          progress: Optional[Callable[[int, int], None]] = None):
    """Merges from word counts: the native trainer or the reference (:func:`.bpe.train_bpe`);
    both return the same :class:`~wordsplit.training.bpe.TrainResult`."""
    if resolve_backend(backend) == "native":
        from .native import train_native

        return train_native(counts, vocab_size=vocab_size, special_tokens=special_tokens,
                            min_frequency=min_frequency, max_token_length=max_token_length, progress=progress)
    from .bpe import train_bpe

    return train_bpe(counts, vocab_size=vocab_size, special_tokens=special_tokens, min_frequency=min_frequency,
                     max_token_length=max_token_length, progress=progress)


def save_vocab(vocab, out_dir: Union[str, os.PathLike], **kwargs):
    """Write ``vocab`` as ``tokenizer.json``, ``vocab.json`` + ``merges.txt`` and
    ``<name>.tiktoken`` in ``out_dir`` (see :func:`wordsplit.training.save.save_all`)."""
    from .save import save_all

    return save_all(vocab, out_dir, **kwargs)


__all__ = ["count_source", "learn", "save_vocab", "train"]
