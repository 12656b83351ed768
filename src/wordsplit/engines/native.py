"""The native engine: the Rust core's ``Pipeline`` (encode) and ``MergeTables`` (decode).

One native call does a whole encode. Each stage is native when it can be (the scanners, the
``regex`` spanner for any pattern the core can compile, ``hf-split`` programs whose patterns it
can compile (BERT's pre-tokenizer among them), the three encoders and ``auto``, the Unicode
normalizers, a SentencePiece vocabulary's stages: the ``sentencepiece`` spanner, the
``score-merge`` and ``rank-merge`` encoders, its normalizer (see :func:`native_normalizer`), a
word model's: the ``wordpiece`` and ``word-level`` encoders, HF's ``BertNormalizer``, the
``unigram`` and ``character-bpe`` encoders of Unigram and HF's BPE over characters, llama.cpp's
normalizers and ``llamacpp-wordpiece`` spanner of GGUF WordPiece and Unigram files) and otherwise a
Python component that the native pipeline calls for its stage (a plug-in spanner, encoder or
normalizer, or the ``regex`` spanner for a pattern the core cannot run, such as one that can
match the empty string). While every stage is native, encoding a text of 1 KB or more runs with
the GIL released (a shorter one encodes in 2 µs or less, and releasing the GIL and taking it
back added a fifth to a call on a few words) and batches run on native threads; while one is
Python, the call holds the GIL and batches run on the calling thread. The Rust side checks the
arguments and raises every error with its final message.

>>> from wordsplit import load_vocab
>>> engine = build_native_engine(load_vocab("gpt2"), "gpt2-scanner", "auto")
>>> engine.native, engine.encode("hello world", frozenset(), frozenset())
(True, [31373, 995])
"""

from __future__ import annotations

from typing import Optional

import json

from .. import spec
from ..native_names import ENCODER_ALIASES, SCANNER_PATTERNS
from ..vocab import Vocab
from ..core import extension

# Encoder names the native core implements ("auto" is its own strategy; see options.py), the
# SentencePiece encoders, which it builds from the vocabulary's pattern, and the word models'
# (WordPiece, WordLevel), Unigram's and HF's BPE over characters', which it builds from the
# vocabulary's model.
NATIVE_ENCODERS = frozenset(["auto", *ENCODER_ALIASES, *(a for aliases in ENCODER_ALIASES.values() for a in aliases),
                             "score-merge", "rank-merge", "wordpiece", "word-level", "unigram", "character-bpe"])
# The spanners the core builds from the vocabulary's SentencePieceSplit stage.
NATIVE_PATTERN_SPANNERS = frozenset(["sentencepiece"])
# The spanners the core runs for one kind of spanner stage, whatever the vocabulary.
NATIVE_STAGE_SPANNERS = {"llamacpp-wordpiece": spec.LlamaCppWordPieceSplit}


def native_normalizer(stage: spec.Stage) -> bool:
    """Whether the core runs a normalizer stage: the Unicode forms, SentencePiece's normalizer
    (with its character map), Metaspace after one the core runs, programs of literal ``Replace``
    and ``Prepend`` steps, programs of Unicode forms, ``Lowercase``, ``StripAccents``, ``Strip``
    and ``Precompiled``, HF's ``BertNormalizer``, and llama.cpp's ``LlamaCppBert`` and
    ``LlamaCppUnigram``; not a plug-in's.

    >>> nfkc = spec.Sequence((spec.Nfkc(), spec.Lowercase()))
    >>> native_normalizer(spec.Nfc()), native_normalizer(nfkc), native_normalizer(spec.PluginNormalizer("casefold"))
    (True, True, False)
    """
    return extension().has_native_normalizer(json.dumps(stage.to_json(), ensure_ascii=False))


def native_regex_pattern(pattern: str, *, line_anchors: bool = False) -> Optional[str]:
    r"""``pattern`` in the form the native regex spanner compiles, or None if it cannot run it
    (the Python ``RegexSpanner`` then runs it, and raises its own errors for a bad pattern).

    The classes are expanded once, by the Python translator (``native_pattern``), so both
    spanners read every class from the same Unicode 16.0 tables.

    >>> native_regex_pattern(r"a|b\z")
    'a|b\\z'
    >>> native_regex_pattern(r"a*") is None  # can match empty: left to the Python spanner
    True
    """
    from ..errors import UnsupportedTokenizerError
    from ..spanners.regex import native_pattern

    try:
        expanded = native_pattern(pattern, line_anchors=line_anchors)
        extension().regex_plan(expanded)
    except UnsupportedTokenizerError:
        return None
    return expanded


def native_split_patterns(program: spec.SplitProgram) -> Optional[list[str]]:
    """The expanded patterns with which the native engine's regex sequence runs this split
    program, or None when it cannot (the Python spanner then runs it).

    The native sequence cuts each piece into its matches and the text between them, which is
    an ``Isolated`` step; so a program of Isolated steps whose every pattern the native regex
    spanner runs (it refuses any that can match the empty string, whose handling engines do
    not share) runs natively, with the same matches (the native spanner is proven equal to the
    ``regex`` module on the translated pattern, which ``HFSplitSpanner`` uses).

    >>> from wordsplit.split_programs import split_program
    >>> native_split_patterns(split_program([{"pattern": "[0-9]", "behavior": "Isolated", "invert": False}]))
    ['[0-9]']
    >>> native_split_patterns(split_program([{"pattern": "[0-9]", "behavior": "Contiguous", "invert": False}]))
    """
    steps = program.steps
    if not steps or any(not isinstance(step, spec.Split) or step.behavior != "Isolated" for step in steps):
        return None
    patterns = [native_regex_pattern(step.pattern, line_anchors=True) for step in steps]
    return None if None in patterns else patterns


def native_program_steps(program: spec.SplitProgram) -> Optional[list]:
    r"""The steps of a split program as the native engine runs it (``Pipeline(program=...)``),
    or None if it cannot (the Python ``HFSplitSpanner`` then runs it).

    Each step is None for ``add_prefix_space``, else ``(pattern, behavior, invert)`` with the
    pattern in its expanded form (``native_pattern``: the classes from the same Unicode 16.0
    tables as the Python spanner's), or as it is when a scanner is registered for it (ByteLevel's
    pattern: it matches at every position, so its matches are the scanner's proven pieces). A
    pattern that can match the empty string keeps the whole program in Python.

    >>> from wordsplit.split_programs import PREFIX_SPACE_STEP, split_program
    >>> native_program_steps(split_program([{"pattern": "[0-9]", "behavior": "Removed", "invert": False},
    ...                                     PREFIX_SPACE_STEP]))
    [('[0-9]', 'Removed', False), None]
    >>> native_program_steps(split_program([{"pattern": "x*", "behavior": "Removed", "invert": False}])) is None
    True
    """
    from ..errors import UnsupportedTokenizerError
    from ..spanners.regex import native_pattern

    scanned = {p for patterns in SCANNER_PATTERNS.values() for p in patterns}
    steps: list = []
    try:
        for step in program.steps:
            if isinstance(step, spec.PrefixSpaceStep):
                steps.append(None)
                continue
            regex = step.pattern
            expanded = regex if regex in scanned else native_pattern(regex, line_anchors=True)
            steps.append((expanded, step.behavior, step.invert))
        extension().hf_program_spans(steps, [])  # compiles every step, or raises
    except UnsupportedTokenizerError:
        return None
    return steps


def spec_text(text: str) -> str:
    """A pipeline's JSON text as the core reads and writes it back: the same canonical text the
    package writes (:meth:`~wordsplit.spec.PipelineSpec.dumps`), for any pipeline.

    Raises:
        VocabFormatError: text the core does not read as a pipeline.

    >>> from wordsplit.spec import PipelineSpec, RegexSplit
    >>> text = PipelineSpec(spanner=RegexSplit("[a-z]+|.")).dumps()
    >>> spec_text(text) == text
    True
    """
    return extension().pipeline_spec_text(text)


def built() -> bool:
    """Whether the compiled core is there (and not switched off: :func:`wordsplit.core.switched_off`)."""
    return extension() is not None


class NativePlaces:
    """The native engine's token places (five uint64 per token: byte start, byte end, char
    start, char end, word) in the buffer it filled; :meth:`pairs` makes a field's tuples in
    one native call, without a Python int per place."""

    __slots__ = ("_view",)

    def __init__(self, buffer: bytes) -> None:
        self._view = memoryview(buffer).cast("Q")

    def __getitem__(self, index):
        return self._view[index]

    def __len__(self) -> int:
        return len(self._view)

    def pairs(self, field: int) -> list[tuple[int, int]]:
        """The ``(place[field], place[field + 1])`` of every token."""
        return extension().offset_pairs(self._view.obj, field)


def word_counter(*args):
    """The core's ``WordCounter`` (the native word counts training starts from), made with
    ``args``: ``(pattern, normalizer)``, or none for one filled from counts."""
    return extension().WordCounter(*args)


def is_word_counter(value: object) -> bool:
    """Whether ``value`` is the core's ``WordCounter``."""
    core = extension()
    return core is not None and isinstance(value, core.WordCounter)


# The models whose tokens need not spell their text: the core places them from the length of the
# part of its piece each token stands for (its ``wordpiece`` and ``word-level`` encoders say it,
# as its ``unigram`` encoder does for Unigram's), or, for a plug-in encoder of theirs, which
# cannot say it, the Python engine does.
READS_TEXT = (spec.WordPiece, spec.WordLevel, spec.CharacterBpe)


def offsets_in_python(vocab: Vocab) -> bool:
    """Whether the offsets of ``vocab``'s native pipeline are the Python engine's even when every
    stage is native: HF's BPE over characters' (``CharacterBpe``, whose tokens need not tile
    their piece). A word model's (WordPiece, WordLevel) are the core's, and a Unigram model's,
    through every normalizer the core runs, llama.cpp's of a GGUF file too; with a stage the
    core does not run, a model of :data:`READS_TEXT` has the Python engine's
    (:meth:`NativeEngine.encode_with_offsets`).

    >>> from wordsplit import load_vocab
    >>> offsets_in_python(load_vocab("tests/data/unigram/spiece.model.gz"))
    False
    >>> offsets_in_python(load_vocab("tests/data/wordpiece/all-MiniLM-L6-v2/tokenizer.json.gz"))
    False
    """
    return isinstance(vocab.pipeline.model, spec.CharacterBpe)


class NativeEngine:
    """Encodes with a native ``Pipeline`` and decodes with the vocabulary's native tables."""

    def __init__(self, vocab: Vocab, pipeline, tables, components: tuple[str, str] = ("", "")) -> None:
        self.vocab = vocab
        self._pipeline = pipeline
        self._tables = tables
        self.native = pipeline.native
        self._components = components
        # A model whose tokens do not spell their text has the Python engine's offsets when the
        # core cannot place them: HF's BPE over characters, and a word model with a stage the
        # core does not run (a plug-in encoder says no token's part of its piece).
        model = vocab.pipeline.model
        self.python_offsets = offsets_in_python(vocab) or not self.native and isinstance(model, READS_TEXT)
        self._offsets_engine = None
        specials = frozenset(vocab.special_tokens)
        self._allow_all = (specials, frozenset())
        self._policies: dict[tuple[frozenset[str], frozenset[str]], object] = {}

    def _policy(self, allowed: frozenset[str], disallowed: frozenset[str]):
        """The pipeline's compiled form of a special-token policy (cached)."""
        key = (allowed, disallowed)
        policy = self._policies.get(key)
        if policy is None:
            everything = key == self._allow_all
            policy = self._pipeline.policy(None if everything else list(allowed), list(disallowed))
            if len(self._policies) > 64:
                self._policies.clear()
            self._policies[key] = policy
        return policy

    def bind(self, allowed: frozenset[str], disallowed: frozenset[str]):
        """``encode``, ``encode_numpy`` and ``count`` of a text under one policy, bound once
        (a native ``PolicyCalls``): the policy's compiled form is found here, not per call."""
        return self._pipeline.bind(self._policy(allowed, disallowed))

    def encode(self, text, allowed, disallowed) -> list[int]:
        return self._pipeline.encode(text, self._policy(allowed, disallowed))

    def encode_with_offsets(self, text, allowed, disallowed):
        """``(ids, places, char_map)`` as the Python engine gives them; the places stay in the
        native buffer (a uint64 memoryview) until the offsets are asked for. The Python engine
        gives them where the core cannot (:attr:`python_offsets`).

        >>> from wordsplit import get_tokenizer
        >>> engine = get_tokenizer("tests/data/wordpiece/all-MiniLM-L6-v2/tokenizer.json.gz").native_engine()
        >>> ids, places, _ = engine.encode_with_offsets("Unaffable!", frozenset(), frozenset())
        >>> ids, places.pairs(2), engine.python_offsets  # una ##ffa ##ble !
        ([14477, 20961, 3468, 999], [(0, 3), (3, 6), (6, 9), (9, 10)], False)
        """
        if self.python_offsets:
            if self._offsets_engine is None:
                from .python import build_python_engine

                self._offsets_engine = build_python_engine(self.vocab, *self._components)
            return self._offsets_engine.encode_with_offsets(text, allowed, disallowed)
        ids, places, fixed = self._pipeline.encode_with_offsets(text, self._policy(allowed, disallowed))
        if fixed:
            from ..offsets import surrogate_char_map

            return ids, NativePlaces(places), surrogate_char_map(text)
        return ids, NativePlaces(places), None

    def encode_numpy(self, text, allowed, disallowed):
        """The ids of ``text`` as a read-only numpy uint32 array owning an exact-size native copy
        of them (no Python int per id); the caller has checked that numpy imports."""
        return self._pipeline.encode_numpy(text, self._policy(allowed, disallowed))

    def count(self, text, allowed, disallowed) -> int:
        return self._pipeline.count(text, self._policy(allowed, disallowed))

    def encode_batch(self, texts, allowed, disallowed, num_threads: Optional[int]) -> list[list[int]]:
        return self._pipeline.encode_batch(texts, self._policy(allowed, disallowed), num_threads)

    def encode_batch_flat(self, texts, allowed, disallowed, num_threads: Optional[int]):
        ids, offsets = self._pipeline.encode_batch_flat(texts, self._policy(allowed, disallowed), num_threads)
        return memoryview(ids).cast("I"), memoryview(offsets).cast("Q")

    def encode_documents_flat(self, buffer, separator: bytes, limit: int, last: bool, allowed, disallowed,
                              num_threads: Optional[int], width: int = 4, eos: Optional[int] = None,
                              start: int = 0) -> tuple[int, bytes, bytes]:
        """Encode a chunk of the documents of ``buffer`` (bytes read from a file) between
        occurrences of ``separator``, without a Python object per document: ``(consumed, data,
        ends)``.

        The chunk is the documents up to the first whose end (its separator included) is
        ``limit`` bytes or more into ``buffer``, and ``consumed`` the bytes they take. When no
        document reaches ``limit``: with ``last``, all of them and the bytes after the last
        separator as one more document, if there are any; without, none (``consumed`` is 0:
        read more). ``data`` holds the ids as little-endian ``width``-byte ints, ``eos`` after
        each document; ``ends`` each document's end in ids, counted from ``start``, as
        little-endian uint64 bytes.

        >>> from wordsplit import get_tokenizer
        >>> engine = get_tokenizer("gpt2").native_engine()
        >>> consumed, data, ends = engine.encode_documents_flat(b"hello world\\n\\nhi\\nrest", b"\\n", 13, False,
        ...                                                     frozenset(), frozenset(), 1, width=2, start=10)
        >>> consumed, memoryview(data).cast("H").tolist(), memoryview(ends).cast("Q").tolist()
        (13, [31373, 995], [12, 12])
        """
        return self._pipeline.encode_documents_flat(buffer, separator, limit, last,
                                                    self._policy(allowed, disallowed), num_threads, width, eos, start)

    def encode_arrow_flat(self, arrays, allowed, disallowed, num_threads: Optional[int], width: int = 4,
                          bos: Optional[int] = None, eos: Optional[int] = None, empty_is_nothing: bool = False):
        """Encode the rows of pyarrow text arrays from their UTF-8 buffers (no str per row).

        Args:
            arrays: pyarrow ``string``/``large_string`` (also ``binary``, ``large_binary`` and
                ``string_view``, cast to strings first, which checks their UTF-8) arrays or
                chunked arrays; sliced arrays are read from their offset.
            width, bos, eos, empty_is_nothing: the layout of the result (see ``frame_documents``
                in :mod:`wordsplit.datasets.formats`).

        Returns:
            ``(data, lengths)``: the framed ids as little-endian ``width``-byte ints, and a
            uint64 memoryview of each row's count of them; a null row has none.

        >>> import pyarrow as pa
        >>> from wordsplit import get_tokenizer
        >>> engine = get_tokenizer("gpt2").native_engine()
        >>> data, lengths = engine.encode_arrow_flat([pa.array(["hello world", None, ""])],
        ...                                          frozenset(), frozenset(), None, eos=50256)
        >>> list(memoryview(data).cast("I")), lengths.tolist()
        ([31373, 995, 50256, 50256], [3, 0, 1])
        """
        chunks = [chunk for array in arrays for chunk in arrow_chunks(array)]
        data, lengths = self._pipeline.encode_arrow_flat(chunks, self._policy(allowed, disallowed), num_threads,
                                                         width, bos, eos, empty_is_nothing)
        return data, memoryview(lengths).cast("Q")

    def decode_bytes(self, ids) -> bytes:
        return self._tables.decode_bytes(ids)

    def decode(self, ids, errors: str) -> str:
        return self._tables.decode_text(ids, errors)

    def decode_batch(self, batch, errors: str, num_threads: Optional[int]) -> list[str]:
        return self._tables.decode_batch(batch, errors, num_threads)


def arrow_chunks(array) -> list:
    """The buffers of a pyarrow text array (or each chunk of a chunked array) as
    ``Pipeline.encode_arrow_flat`` takes them: ``(validity, offsets, data, large, offset,
    length)``, each buffer a byte memoryview or None.

    Raises:
        EncodeInputError: not a text array, or a binary one that is not UTF-8.
    """
    import pyarrow as pa

    from ..errors import EncodeInputError

    if isinstance(array, pa.ChunkedArray):
        return [chunk for part in array.chunks for chunk in arrow_chunks(part)]
    if not isinstance(array, pa.Array):
        raise EncodeInputError(f"expected a pyarrow Array or ChunkedArray, not {type(array).__name__}")
    kind = array.type
    try:
        if pa.types.is_binary(kind):
            array = array.cast(pa.string())
        elif pa.types.is_large_binary(kind) or str(kind) in ("string_view", "binary_view"):
            array = array.cast(pa.large_string())
    except pa.ArrowInvalid as exc:
        raise EncodeInputError(f"the array's values are not UTF-8 text ({exc})") from None
    if not (pa.types.is_string(array.type) or pa.types.is_large_string(array.type)):
        raise EncodeInputError(f"expected an array of strings, not {array.type}")
    validity, offsets, data = (None if b is None else memoryview(b).cast("B") for b in array.buffers())
    if array.null_count == 0:
        validity = None  # a bitmap may be present with every bit set
    if offsets is None:  # an empty array may have no buffers at all
        offsets = memoryview(bytes(8))
    return [(validity, offsets, data, pa.types.is_large_string(array.type), array.offset, len(array))]


def build_native_engine(vocab: Vocab, spanner: str, encoder: str) -> NativeEngine:
    """The native engine of ``vocab``: native stages where the core has them, the registered
    Python components for the others."""
    from ..encoders import ENCODERS
    from ..normalizers import normalizer_for
    from ..spanners import SPANNERS, spanner_argument
    from ..tables import MergeTables

    tables = vocab.native_tables()
    stage = vocab.pipeline.spanner
    pattern = vocab.pattern or ""  # (the regex a native spanner runs; the pipeline says the rest)
    native_spanner = spanner in SCANNER_PATTERNS and vocab.pattern in SCANNER_PATTERNS[spanner] \
        or spanner in NATIVE_PATTERN_SPANNERS and isinstance(stage, spec.SentencePieceSplit) \
        or spanner in NATIVE_STAGE_SPANNERS and isinstance(stage, NATIVE_STAGE_SPANNERS[spanner])
    if spanner == "regex" and vocab.pattern is not None:
        expanded = native_regex_pattern(vocab.pattern)
        native_spanner = expanded is not None
        pattern = expanded if native_spanner else pattern
    patterns = program = None
    if spanner == "hf-split" and isinstance(stage, spec.SplitProgram):
        # A split program of Isolated steps runs as a native regex sequence.
        patterns = native_split_patterns(stage)
        native_spanner = patterns is not None
        if not native_spanner:
            # Any other program (other behaviors, deleted text, an inserted space) runs on the
            # native program runner; the Python spanner stays for the offsets, which it gives
            # from the same pieces.
            program = native_program_steps(stage)
    native_normalize = native_normalizer(vocab.normalizer)
    flags = vocab.literal_flags
    literals = [(t, i, True, flags.get(t, 0)) for t, i in vocab.special_tokens.items()]
    literals += [(t, i, False, flags.get(t, 0)) for t, i in vocab.added_tokens.items()]
    pipeline = extension().Pipeline(
        tables,
        spec=vocab.pipeline.dumps(),
        encoder=encoder,
        encoder_impl=None if encoder in NATIVE_ENCODERS else ENCODERS.get(encoder)(MergeTables.of(vocab)),
        spanner=spanner,
        spanner_impl=None if native_spanner else SPANNERS.get(spanner)(spanner_argument(stage)),
        pattern=pattern,
        literals=literals,
        normalizer_impl=None if native_normalize else normalizer_for(vocab.normalizer),
        patterns=patterns,
        program=program,
        # Only a vocabulary that lacks some byte ever uses its unk token.
        unk=(vocab.unk_token_id, vocab.fuse_unk) if vocab.unk_token_id is not None and vocab.missing_bytes else None,
        # (a SentencePiece BPE model whose pieces hold characters that are no piece ranks them by score;
        # a Unigram model's search adds them)
        scores=list(vocab.scores) if vocab.scores is not None
        and (vocab.pipeline.sentencepiece or isinstance(vocab.pipeline.model, spec.Unigram)) else None,
    )
    return NativeEngine(vocab, pipeline, tables, (spanner, encoder))
