"""The Python engine: the whole encode pipeline in readable Python, and decode.

It is the reference the native engine is tested against, the fallback without the extension,
and what :mod:`wordsplit.explain` traces. Every stage is a component given to it:

    text → literals (special and added tokens, leftmost-longest) → normalizer → spanner →
    span encoder → ids

The semantics are the native engine's (``crates/wordsplit/src/pipeline/mod.rs``), including every error
message, so that both backends give the same ids and raise the same errors:

* a text that is not a ``str`` raises :class:`EncodeInputError`; lone surrogates become U+FFFD
  and surrogate pairs their character, as tiktoken does;
* literals are found leftmost-longest by :class:`~wordsplit.specials.LiteralScan` (with HF's
  added-token flags, when the vocabulary has any; the ``normalized`` ones in each stretch's
  normalized text, by their normalized contents); a special literal the call allows is a
  token, a disallowed one raises :class:`DisallowedSpecialError`, any other is plain text (the
  scan resumes one character after its start); added tokens are always tokens;
* a spanner's pieces must cover the text, unless it declares ``drops_text``: then its
  ``spans`` are encoded (each span's prefix and text), and the text between them is dropped;
* a component that breaks its contract raises :class:`ComponentError`; an exception raised
  inside a component propagates unchanged.

>>> from wordsplit import load_vocab
>>> engine = build_python_engine(load_vocab("gpt2"), "regex", "heap-merge")
>>> engine.encode("hello world", frozenset(), frozenset())
[31373, 995]
"""

from __future__ import annotations

import itertools
import re
from array import array
from typing import Callable, Optional, Protocol

from ..errors import ComponentError
from ..protocols import DroppingSpanner, Normalizer, SpanEncoder, Spanner, drops_text
from ..specials import LiteralScan, disallowed_error
from ..spec import Nfc, Nfd, Nfkc, Nfkd, NoNormalizer, PluginNormalizer, Stage
from ..vocab import Vocab, second_pass_normalizes
from .arguments import check_batch, check_text, token_id, without_surrogates

# Pieces seen recently and their ids; bounded so memory stays flat on huge inputs.
PIECE_CACHE_SIZE = 1 << 16


# The single Unicode forms, aligned by the crate's changes (wordsplit.offsets.form_alignment).
_FORMS = {Nfc(): "NFC", Nfd(): "NFD", Nfkc(): "NFKC", Nfkd(): "NFKD"}


class Trace(Protocol):
    """What a traced run reports (see :mod:`wordsplit.explain`)."""

    def literal(self, text: str, token_id: int) -> None: ...
    def segment(self, text: str, normalized: str) -> None: ...
    def piece(self, text: str, ids: list[int]) -> None: ...


def _utf8(text: str) -> bool:
    """Whether ``text`` encodes to UTF-8 (holds no surrogate)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


# Ids joined at a time by decode_bytes.
DECODE_CHUNK = 1 << 16


class PythonEngine:
    """Encodes and decodes in Python with the given components.

    Args:
        vocab: the vocabulary.
        spanner, spanner_name: an object with ``split(text) -> list[str]`` (or, when its
            ``drops_text`` is true, ``spans(text)``; see :mod:`wordsplit.spanners`), and its name.
        encoder, encoder_name: an object with ``encode_piece(bytes) -> list[int]``, and its name.
        normalize, normalizer: a function ``str -> str``, and the stage it runs.
    """

    native = False

    def __init__(self, vocab: Vocab, *, spanner: Spanner | DroppingSpanner, spanner_name: str, encoder: SpanEncoder,
                 encoder_name: str, normalize: Normalizer, normalizer: Stage) -> None:
        self.vocab = vocab
        self.spanner, self.spanner_name = spanner, spanner_name
        self.encoder, self.encoder_name = encoder, encoder_name
        self.normalize, self.normalizer = normalize, normalizer
        self._later = getattr(normalize, "later", None)
        # A spanner that declares it drops text gives spans, read once (see wordsplit.protocols).
        self._drops_text = drops_text(spanner)
        self._cache: dict[bytes, list[int]] = {}
        self._missing = vocab.missing_bytes  # bytes without a token (empty for most vocabularies)
        # Cuts a piece into runs of such bytes and runs of the others (the split keeps both).
        self._unk = (vocab.unk_token_id, vocab.fuse_unk) if vocab.unk_token_id is not None and self._missing else None
        self._unknown_runs = re.compile(b"([" + re.escape(self._missing) + b"]+)") if self._missing else None
        literals = vocab.all_special_literals
        self._literal_ids = literals
        self._added = frozenset(vocab.added_tokens)
        # HF's second pass finds the `normalized` tokens in each stretch's normalized text
        # (see wordsplit.specials); with no normalizer that is the stretch itself. HF's Metaspace
        # pre-tokenizer, which the normalizer runs last, comes after that pass in HF: the pass
        # searches the text of the normalizer before it, and Metaspace runs on each part left.
        from ..normalizers import MetaspaceNormalizer

        second = normalize if second_pass_normalizes(vocab.normalizer, vocab.literal_flags) else None
        # (after WhitespaceSplit too: Metaspace's part is then the part's words)
        self._metaspace = normalize if second is not None and isinstance(normalize, MetaspaceNormalizer) else None
        if self._metaspace is not None:
            second = self._metaspace.inner
        self._literals = LiteralScan(literals, vocab.literal_flags, second) if literals else None
        self._second_pass = self._literals is not None and self._literals.normalizes

    # -- encode ---------------------------------------------------------------------------------

    def encode(self, text: str, allowed: frozenset[str], disallowed: frozenset[str],
               trace: Optional[Trace] = None) -> list[int]:
        """The ids of ``text``; ``trace`` (optional) sees every literal, segment and piece."""
        text = without_surrogates(check_text(text))
        ids: list[int] = []
        if self._literals is None:
            self._encode_plain(text, ids, trace)
            return ids
        is_token = self._is_token(allowed, disallowed)
        for start, end, literal in self._literals.spans(text, is_token):
            if literal is None:
                self._encode_plain(text[start:end], ids, trace, is_token, later=start > 0)
                continue
            token = self._literal_ids[literal]
            ids.append(token)
            if trace is not None:
                trace.literal(literal, token)
        return ids

    def _is_token(self, allowed: frozenset[str], disallowed: frozenset[str]) -> Callable[[str], bool]:
        """Whether a literal found in the text is a token under the call's policy (an added
        token always is; a disallowed special raises; another special is plain text)."""
        added = self._added

        def is_token(literal: str) -> bool:
            if literal in added or literal in allowed:
                return True
            if literal in disallowed:
                raise disallowed_error(literal)
            return False

        return is_token

    def encode_with_offsets(self, text: str, allowed: frozenset[str], disallowed: frozenset[str]):
        """``(ids, places, char_map)``: the ids of ``text``, 5 ints per token (byte start, byte
        end, char start, char end, word; see :mod:`wordsplit.offsets`) with char positions in
        the text as encoded, and the map from those to the str given (None if they are the same)."""
        from ..offsets import surrogate_char_map

        original = check_text(text)
        text = without_surrogates(original)
        char_map = None if text is original else surrogate_char_map(original)
        ids: list[int] = []
        places = array("Q")
        cursor = [0, 0, 0]  # char index, its byte index, next word
        if self._literals is None:
            self._place_plain(text, 0, len(text), ids, places, cursor)
            return ids, places, char_map
        is_token = self._is_token(allowed, disallowed)
        for start, end, literal in self._literals.spans(text, is_token):
            if literal is None:
                self._place_plain(text, start, end, ids, places, cursor, is_token)
                continue
            # A token's place is its span in the text, with the whitespace lstrip/rstrip took.
            ids.append(self._literal_ids[literal])
            byte_start = self._byte_at(text, start, cursor)
            places.extend((byte_start, byte_start + len(text[start:end].encode("utf-8")), start, end, cursor[2]))
            cursor[2] += 1
        return ids, places, char_map

    @staticmethod
    def _byte_at(text: str, index: int, cursor: list[int]) -> int:
        """The byte position of char ``index``, moving the cursor there (a token's span can
        start before the end of the one before it, see wordsplit.specials.LiteralScan)."""
        if index >= cursor[0]:
            cursor[1] += len(text[cursor[0]:index].encode("utf-8"))
        else:
            cursor[1] -= len(text[index:cursor[0]].encode("utf-8"))
        cursor[0] = index
        return cursor[1]

    def _place_plain(self, text: str, start: int, end: int, ids: list[int], places: array, cursor: list[int],
                     is_token=None) -> None:
        """Encode ``text[start:end]`` (no literals of the first pass) and append its tokens'
        ids and places."""
        from ..normalizers import ProgramNormalizer
        from ..offsets import form_alignment, prefix_suffix_alignment
        from ..normalizers import (
            LlamaCppBertNormalizer, LlamaCppUnigramNormalizer, MetaspaceNormalizer, SentencePieceNormalizer,
        )

        if start == end:
            return
        segment = text[start:end]
        normalize = self._later if start > 0 and self._later is not None else self.normalize
        if self._metaspace is not None and self._second_pass:
            self._place_metaspace_parts(text, start, segment, ids, places, cursor, is_token)
            return
        if isinstance(self.normalizer, NoNormalizer):
            normalized, alignment = segment, None
        elif self.normalizer in _FORMS:
            normalized, alignment = form_alignment(segment, _FORMS[self.normalizer])
        elif isinstance(normalize, (ProgramNormalizer, SentencePieceNormalizer, MetaspaceNormalizer,
                                    LlamaCppBertNormalizer, LlamaCppUnigramNormalizer)):
            # Aligned step by step, as HF's NormalizedString (or sentencepiece's norm_to_orig) aligns it
            # (llama.cpp's normalizers: each character to the one, or the map's key, it comes from).
            normalized, alignment = normalize.alignment(segment)
        else:
            normalized = self._normalized(segment)
            alignment = None if normalized == segment else prefix_suffix_alignment(segment, normalized)
        if not self._second_pass:
            self._place_normalized(text, start, segment, normalized, alignment, ids, places, cursor)
            return
        # HF's second pass: the `normalized` tokens in the normalized segment. A token's place
        # is the original text its normalized characters are aligned to (HF's slice of the
        # NormalizedString); the text between tokens keeps its characters' alignments.
        if alignment is None:
            alignment = [(i, i + 1, True) for i in range(len(segment))]
        for a, b, literal in self._literals.second_pass(normalized, is_token):
            if literal is None:
                self._place_normalized(text, start, segment, normalized[a:b], alignment[a:b], ids, places, cursor)
                continue
            self._place_second_literal(text, start, alignment, a, b, literal, ids, places, cursor)

    def _place_second_literal(self, text: str, start: int, alignment, a: int, b: int, literal: str, ids: list[int],
                              places: array, cursor: list[int]) -> None:
        """Place a token of the second pass found at ``a:b`` of a normalized stretch that starts
        at char ``start``: at the original text its normalized characters are aligned to (HF's
        slice of the NormalizedString)."""
        ids.append(self._literal_ids[literal])
        first, last = start + alignment[a][0], start + alignment[b - 1][1]
        byte_start = self._byte_at(text, first, cursor)
        places.extend((byte_start, byte_start + len(text[first:last].encode("utf-8")), first, last, cursor[2]))
        cursor[2] += 1

    def _place_metaspace_parts(self, text: str, start: int, segment: str, ids: list[int], places: array,
                               cursor: list[int], is_token) -> None:
        """:meth:`_place_plain` with HF's Metaspace after the second pass: the ``normalized``
        tokens found in the text of the normalizer before Metaspace, and Metaspace run on each
        part between them, aligned as HF aligns it."""
        metaspace = self._metaspace
        normalized, alignment = metaspace.before_alignment(segment)
        heads = metaspace.heads(segment, start > 0, alignment)
        for a, b, literal in self._literals.second_pass(normalized, is_token):
            if literal is None:
                part, part_alignment = metaspace.part_alignment(normalized[a:b], alignment[a:b], max(heads - a, 0))
                self._place_normalized(text, start, segment, part, part_alignment, ids, places, cursor)
                continue
            self._place_second_literal(text, start, alignment, a, b, literal, ids, places, cursor)

    def _place_normalized(self, text: str, start: int, segment: str, normalized: str, alignment, ids: list[int],
                          places: array, cursor: list[int]) -> None:
        """Split and encode ``normalized``, the normalized text of (part of) ``segment``,
        which starts at char ``start`` of ``text``; ``alignment`` aligns each of its
        characters to ``segment`` (None: it is ``segment``)."""
        from ..offsets import narrow_to_alignment, place_tokens, spans_alignment

        if alignment is not None:
            # Only the part of the segment this text is aligned to: placing its tokens costs
            # its own length, not the whole stretch's for each part between second-pass tokens.
            skipped, segment, alignment = narrow_to_alignment(segment, alignment)
            start += skipped
        found: list[int] = []
        ends: list[int] = []
        if self._drops_text:
            # The pieces are the spans' text (prefixes included), aligned through the spans.
            spans = self._spans(normalized)
            pieces = [prefix + normalized[a:b] for a, b, prefix in spans]
            alignment = spans_alignment(normalized, spans, alignment, len(segment))
            normalized = "".join(pieces)
        else:
            pieces = self._split(normalized)
        self._encode_pieces(pieces, found, ends)
        ids.extend(found)
        spans = self._token_spans(pieces)
        place_tokens(places, found, ends, self.vocab.token_bytes, segment, normalized, alignment,
                     self._byte_at(text, start, cursor), start, cursor[2], self._untiled,
                     frozenset(self.vocab.missing_bytes), self._unk,
                     self._token_lengths(pieces) if spans is None else None, spans)
        cursor[2] += len(ends)

    def _token_spans(self, pieces: list[str]) -> Optional[list[tuple[int, int, int]]]:
        """``(piece, start, end)`` of each token, from the encoder's ``token_spans(piece)``
        (where HF's offsets place the tokens of HF's BPE over characters, which need not tile
        the piece: see :meth:`CharacterBpeEncoder.token_spans
        <wordsplit.encoders.character_bpe.CharacterBpeEncoder.token_spans>`); None for an
        encoder without it."""
        token_spans = getattr(self.encoder, "token_spans", None)
        if token_spans is None:
            return None
        pieces = [piece for piece in pieces if piece]
        return [(k, a, b) for k, piece in enumerate(pieces) for a, b in token_spans(piece.encode("utf-8"))]

    def _token_lengths(self, pieces: list[str]) -> Optional[list[int]]:
        """The UTF-8 length of the part of its piece each token stands for, when the tokens do
        not spell their pieces (a word model's ``##`` and unknown tokens: the encoder's
        ``token_lengths(piece)``, or ``tokens(text)``, which says where each ends in characters);
        None when they do."""
        token_lengths = getattr(self.encoder, "token_lengths", None)
        if token_lengths is not None:
            return [length for piece in pieces if piece for length in token_lengths(piece.encode("utf-8"))]
        tokens = getattr(self.encoder, "tokens", None)
        if tokens is None:
            return None
        lengths = []
        for piece in pieces:
            start, found, k = 0, tokens(piece), 0
            while k < len(found):
                end = found[k][1]
                size, sharing = len(piece[start:end].encode("utf-8")), 1
                while k + sharing < len(found) and found[k + sharing][1] == end:
                    sharing += 1
                # Byte fallback's tokens of an unknown run all end where it ends: one byte each
                # (any other count does not tile, which place_tokens reports).
                lengths.extend([size] if sharing == 1 else [1] * sharing if sharing == size else [0] * sharing)
                start, k = end, k + sharing
        return lengths

    def _untiled(self, piece: bytes) -> ComponentError:
        return ComponentError(
            f"encoder {self.encoder_name!r}: the ids encode_piece({piece!r}) returned do not spell the piece; "
            "offsets need each piece's ids to join to its bytes"
        )

    def _split(self, text: str) -> list[str]:
        """The spanner's pieces of ``text``, checked to cover it."""
        split = self.spanner.split(text)
        if not isinstance(split, list) or not all(isinstance(p, str) for p in split) \
                or "".join(split) != text:
            raise ComponentError(
                f"spanner {self.spanner_name!r}: split() must return a list of str that concatenate to its input"
            )
        return split

    def _spans(self, text: str) -> list[tuple[int, int, str]]:
        """A text-dropping spanner's spans of ``text`` as ``(start, end, prefix)``, checked
        (ints in order within the text, a str prefix); empty ones without a prefix skipped."""
        spans = self.spanner.spans(text)
        out: list[tuple[int, int, str]] = []
        position, size = 0, len(text)
        for span in spans if isinstance(spans, list) else [None]:
            prefix = span[2] if isinstance(span, tuple) and len(span) == 3 else ""
            if not isinstance(span, tuple) or len(span) not in (2, 3) or type(span[0]) is not int \
                    or type(span[1]) is not int or not position <= span[0] <= span[1] <= size \
                    or not isinstance(prefix, str) or not _utf8(prefix):
                raise ComponentError(
                    f"spanner {self.spanner_name!r}: spans() must return a list of (start, end) or "
                    "(start, end, prefix) tuples: int offsets in order within its input, a str prefix"
                )
            position = span[1]
            if span[0] < span[1] or prefix:
                out.append((span[0], span[1], prefix))
        return out

    def _encode_pieces(self, pieces: list[str], out: list[int], ends: list[int]) -> None:
        """The ids of ``pieces`` (as ``_encode_plain`` encodes them), and the UTF-8 byte end of
        each non-empty one in their concatenation."""
        end = 0
        for piece in pieces:
            if not piece:
                continue
            data = piece.encode("utf-8")
            out.extend(self._cached_ids(data))
            end += len(data)
            ends.append(end)

    def _cached_ids(self, data: bytes) -> list[int]:
        """The ids of the piece ``data``, from the piece cache or merged (and then cached)."""
        cache = self._cache
        ids = cache.get(data)
        if ids is None:
            ids = self._encode_piece(data)
            if len(cache) >= PIECE_CACHE_SIZE:
                cache.clear()
            cache[data] = ids
        return ids

    def count(self, text: str, allowed: frozenset[str], disallowed: frozenset[str]) -> int:
        return len(self.encode(text, allowed, disallowed))

    def bind(self, allowed: frozenset[str], disallowed: frozenset[str]) -> "PolicyCalls":
        """``encode``, ``encode_numpy`` and ``count`` of a text under one policy."""
        return PolicyCalls(self, allowed, disallowed)

    def encode_batch(self, texts, allowed, disallowed, num_threads: Optional[int]) -> list[list[int]]:
        """Each text's ids, in order, on the calling thread."""
        return [self.encode(text, allowed, disallowed) for text in check_batch(texts)]

    def encode_numpy(self, text, allowed, disallowed):
        """The ids of ``text`` as a read-only numpy uint32 array (the caller has checked that
        numpy imports)."""
        import numpy as np

        ids = np.frombuffer(array("I", self.encode(text, allowed, disallowed)), dtype=np.uint32)
        ids.flags.writeable = False
        return ids

    def encode_batch_flat(self, texts, allowed, disallowed, num_threads: Optional[int]):
        flat, offsets = array("I"), array("Q", [0])
        for ids in self.encode_batch(texts, allowed, disallowed, num_threads):
            flat.extend(ids)
            offsets.append(len(flat))
        return memoryview(flat), memoryview(offsets)

    def _encode_plain(self, text: str, out: list[int], trace: Optional[Trace], is_token=None,
                      later: bool = False) -> None:
        """Normalize a stretch between literals and encode it (``is_token``: the call's
        policy, for the second literal pass on the normalized text; ``later``: the stretch is
        not at the start of the text)."""
        if not text:
            return
        metaspace = self._metaspace
        normalized = self._normalized(text, later) if metaspace is None else without_surrogates(metaspace.inner(text))
        if trace is not None:
            trace.segment(text, normalized)
        if not self._second_pass:
            self._encode_normalized(normalized, out, trace)
            return
        after_literal = False
        heads = metaspace.heads(text, later) if metaspace is not None else 0
        for start, end, literal in self._literals.second_pass(normalized, is_token):
            if literal is None:
                part = normalized[start:end]
                if metaspace is not None:
                    part = metaspace.part(part, max(heads - start, 0))
                if trace is not None and (after_literal or metaspace is not None):  # (not the literal's pieces)
                    trace.segment(normalized[start:end], part)
                self._encode_normalized(part, out, trace)
                continue
            after_literal = True
            token = self._literal_ids[literal]
            out.append(token)
            if trace is not None:
                trace.literal(literal, token)

    def _normalized(self, text: str, later: bool = False) -> str:
        """The normalizer's output for ``text``, checked to be a str (a normalizer with a
        ``later`` normalizer, HF's Metaspace ``prepend_scheme="first"``, uses that one for a
        stretch after the start of the text)."""
        normalized = (self._later if later and self._later is not None else self.normalize)(text)
        if not isinstance(normalized, str):
            raise ComponentError(
                f"normalizer {_name(self.normalizer)!r} must return a str, not {type(normalized).__name__}"
            )
        return without_surrogates(normalized)  # a plug-in's output, fixed as the input was

    def _encode_normalized(self, normalized: str, out: list[int], trace: Optional[Trace]) -> None:
        """Split normalized text (no literals) into pieces and encode them."""
        if self._drops_text:
            pieces = [prefix + normalized[a:b] for a, b, prefix in self._spans(normalized)]
        else:
            pieces = self._split(normalized)
        for piece in pieces:
            if not piece:
                continue
            ids = self._cached_ids(piece.encode("utf-8"))
            out.extend(ids)
            if trace is not None:
                trace.piece(piece, list(ids))

    def _encode_piece(self, piece: bytes) -> list[int]:
        if self._missing:
            kept = piece.translate(None, self._missing)
            if len(kept) != len(piece):
                return self._encode_with_missing(piece, kept)
        return self._merge(piece)

    def _merge(self, piece: bytes) -> list[int]:
        ids = self.encoder.encode_piece(piece)
        n_vocab = self.vocab.n_vocab
        if not isinstance(ids, list) or not all(type(i) is int and 0 <= i < n_vocab for i in ids):
            raise ComponentError(
                f"encoder {self.encoder_name!r}: encode_piece({piece!r}) must return a list of token ids "
                f"below {n_vocab}"
            )
        return ids

    def _encode_with_missing(self, piece: bytes, kept: bytes) -> list[int]:
        """A piece holding bytes no token spells, as HF encodes it: a piece that is itself a
        token is that token (whole-piece lookup, HF's ``ignore_merges``); else each such byte
        is the unk token (a run of them one, with ``fuse_unk``) and the bytes between them
        merge on their own, since no merge holds the unk token; without an unk token, the
        bytes are dropped before merging ("axb" merges as "ab"; nothing left gives no ids)."""
        vocab = self.vocab
        if vocab.whole_piece_lookup and piece in vocab.ranks:
            return [vocab.ranks[piece]]
        unk = vocab.unk_token_id
        if unk is None:
            return self._merge(kept) if kept else []
        ids: list[int] = []
        for run in self._unknown_runs.split(piece):
            if not run:
                continue
            if run[0] in self._missing:
                ids.extend([unk] if vocab.fuse_unk else [unk] * len(run))
            else:
                ids.extend(self._merge(run))
        return ids

    # -- decode ---------------------------------------------------------------------------------

    def decode_bytes(self, ids) -> bytes:
        # bytes.join holds an 80-byte buffer view per item while it joins, so one join of 10M
        # ids would peak near 1 GB; joining chunks keeps that to a few MB.
        table, vocab, ids = self.vocab.token_bytes, self.vocab, iter(ids)
        out = bytearray()
        while chunk := [table[token_id(vocab, i)] for i in itertools.islice(ids, DECODE_CHUNK)]:
            out += b"".join(chunk)
        return bytes(out)

    def decode(self, ids, errors: str) -> str:
        return self.decode_bytes(ids).decode("utf-8", errors=errors)

    def decode_batch(self, batch, errors: str, num_threads: Optional[int]) -> list[str]:
        return [self.decode(ids, errors) for ids in batch]


def build_python_engine(vocab: Vocab, spanner: str, encoder: str) -> PythonEngine:
    """The Python engine of ``vocab`` with the registered spanner and encoder of these names
    and the vocabulary's normalizer."""
    from ..encoders import ENCODERS
    from ..normalizers import normalizer_for
    from ..spanners import SPANNERS, spanner_argument
    from ..tables import MergeTables

    return PythonEngine(
        vocab,
        spanner=SPANNERS.get(spanner)(spanner_argument(vocab.pipeline.spanner)), spanner_name=spanner,
        encoder=ENCODERS.get(encoder)(MergeTables.of(vocab)), encoder_name=encoder,
        normalize=normalizer_for(vocab.normalizer), normalizer=vocab.normalizer,
    )


def _name(normalizer: Stage) -> str:
    """A normalizer stage as messages name it: a plug-in by its registered name."""
    return normalizer.name if isinstance(normalizer, PluginNormalizer) else normalizer.kind


class PolicyCalls:
    """An engine's ``encode``, ``encode_numpy`` and ``count`` under one special-token policy,
    as a tokenizer binds them for its default calls (the native engine's equivalent is a native
    object, ``wordsplit._native.PolicyCalls``).

    >>> from wordsplit import TokenizerOptions, load_vocab
    >>> engine = TokenizerOptions(backend="python").build(load_vocab("gpt2"))._engine
    >>> engine.bind(frozenset(), frozenset()).encode("hello world")
    [31373, 995]
    """

    __slots__ = ("_engine", "_allowed", "_disallowed")

    def __init__(self, engine, allowed: frozenset[str], disallowed: frozenset[str]) -> None:
        self._engine = engine
        self._allowed = allowed
        self._disallowed = disallowed

    def encode(self, text) -> list[int]:
        return self._engine.encode(text, self._allowed, self._disallowed)

    def encode_numpy(self, text):
        return self._engine.encode_numpy(text, self._allowed, self._disallowed)

    def count(self, text) -> int:
        return self._engine.count(text, self._allowed, self._disallowed)
