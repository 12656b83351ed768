"""Vocab: everything a vocabulary file says, validated once and then immutable.

A Vocab holds *what* to tokenize with: the bytes of every BPE token (its id is its rank),
the special tokens and the non-special added tokens, its pipeline
(:class:`~wordsplit.spec.PipelineSpec`: the normalizer, the split, the model and the decoder,
as typed values) and the eos/bos ids; for HF files whose merge list is not ordered by merged id, also the
pair-ranked merge table. It does not know *how* to encode; that is the job of the spanners
and encoders that :class:`~wordsplit.options.TokenizerOptions` composes.

>>> v = Vocab(name="tiny", ranks={bytes([b]): b for b in range(256)}, pattern=r"\\S+|\\s+")
>>> v.n_vocab
256
"""

from __future__ import annotations

import sys
from array import array
from itertools import accumulate
from types import MappingProxyType
from typing import Callable, Collection, Mapping, Sequence

from .core import extension
from .errors import VocabFormatError
from .registry import NORMALIZERS
from .spec import Metaspace, NoNormalizer, PipelineSpec, PluginNormalizer, PrefixSpace, RegexSplit, Stage
from .spec import Sequence as NormalizerSequence
from .spec import BytePairEncoding, CharacterBpe, SentencePieceBpe, normalizer_from_name
from .store.digests import sha256_hash



class Vocab:
    """An immutable, validated vocabulary.

    Args:
        name: a short name for messages (``"qwen3"``, a file name...).
        ranks: bytes of every BPE token → its id. Lower id = merged earlier (tiktoken rule).
        pattern: the pre-tokenizer split regex (``\\p{..}`` classes allowed), for a byte-level
            BPE vocabulary split by one regex (tiktoken's); else give ``pipeline``.
        special_tokens: special token text → id; encode follows tiktoken's policy for them.
        added_tokens: non-special added token text → id; always matched in text (as HF does).
        normalizer: with ``pattern``: a normalizer stage (:mod:`wordsplit.spec`) or
            the name of a registered one: ``"none"``, ``"nfc"`` or one added with
            :func:`~wordsplit.normalizers.register_normalizer`.
        pipeline: the whole pipeline as a :class:`~wordsplit.spec.PipelineSpec` (in place of
            ``pattern`` and ``normalizer``): a split program, a SentencePiece model...
        merges: pair-ranked merges ``(left id, right id) → merge rank``, only for files whose
            merge order is not the merged-id order (HF semantics); ``None`` means rank-based.
            Also taken packed: ``bytes`` of little-endian uint32 triples ``(left, right, rank)``
            (:func:`pack_merges`), the form of the loaders of large vocabularies and of the
            parsed-vocab cache; :attr:`merges` is then made on first use, and with the native
            core built its tables check the merges, so no Python dict of them is built.
        n_vocab: the declared vocabulary size, at least ``max id + 1`` and at most
            :func:`id_limit` of the number of tokens (2 x tokens + 65,536).
        eos_token_id, bos_token_id: as the file declares them, or ``None``.
        whole_piece_lookup: a piece that is itself a token is one lookup (tiktoken, and HF
            with ``ignore_merges``); off only for pair-ranked files without ``ignore_merges``.
        source: where it came from, for error messages.
        chat_template: the Jinja chat template of the model (``tokenizer_config.json``'s), or
            None; :mod:`wordsplit.chat` renders it, and falls back to a template bundled
            under the vocabulary's name (Qwen3's).
        literal_flags: HF's matching flags of the special and added tokens that have any, as
            text → a bitmask of :data:`LSTRIP`, :data:`RSTRIP`, :data:`SINGLE_WORD`,
            :data:`NORMALIZED` and :data:`C_SPACE` (:mod:`wordsplit.specials` has their
            semantics); tokens without flags are left out, and most vocabularies have none.
        unk_token_id: the id a byte without a single-byte token (:attr:`missing_bytes`) is
            encoded as (HF's BPE ``unk_token``); None drops such a byte before merging.
        fuse_unk: consecutive such bytes of one piece make one unk token (HF's ``fuse_unk``).
        scores: the model's score of each token, by id (a Unigram model's log probabilities,
            :class:`~wordsplit.spec.Unigram`), or None for a model without (BPE, WordPiece): one
            finite float for every id from 0 to the largest id of ``ranks``, and no more ids
            than ``n_vocab`` (a special token inside that range has its piece's score too).

    Ids below ``n_vocab`` that no token uses (gaps, GGUF's unused padding) decode as errors.

    :meth:`from_packed` builds one from the token bytes packed in one blob (the parsed-vocab
    cache's form): ``ranks`` and ``token_bytes`` are then made on first use, and the native
    core checks the tokens, so loading a cached vocabulary builds no Python dict at all.

    Raises:
        VocabFormatError: naming ``source`` and the offending entry.
    """

    __slots__ = (
        "name", "pipeline", "special_tokens", "added_tokens", "_merges", "_merges_packed",
        "n_vocab", "eos_token_id", "bos_token_id", "whole_piece_lookup", "source", "n_bpe",
        "_ranks", "_token_bytes", "_packed", "_native", "_hash", "__weakref__", "chat_template", "_missing",
        "literal_flags",
        "unk_token_id", "fuse_unk", "scores",
    )

    def __init__(
        self,
        *,
        name: str,
        ranks: Mapping[bytes, int],
        pattern: str | None = None,
        special_tokens: Mapping[str, int] | None = None,
        added_tokens: Mapping[str, int] | None = None,
        normalizer: str | Stage | None = None,
        pipeline: PipelineSpec | None = None,
        merges: Mapping[tuple[int, int], int] | bytes | None = None,
        n_vocab: int | None = None,
        eos_token_id: int | None = None,
        bos_token_id: int | None = None,
        whole_piece_lookup: bool = True,
        source: str | None = None,
        chat_template: str | None = None,
        literal_flags: Mapping[str, int] | None = None,
        unk_token_id: int | None = None,
        fuse_unk: bool = False,
        scores: Sequence[float] | None = None,
    ) -> None:
        set_ = object.__setattr__
        source = source or name
        special_tokens = dict(special_tokens or {})
        added_tokens = dict(added_tokens or {})
        packed_merges = _checked_packed(source, merges)
        if packed_merges is not None and extension() is None:
            merges, packed_merges = unpack_merges(packed_merges), None
        pipeline = pipeline_of(source, pattern, normalizer, pipeline)
        # (packed merges are checked by the native tables, built below)
        _validate(source, ranks, special_tokens, added_tokens, pipeline,
                  None if packed_merges is not None else merges)
        max_id = max([*ranks.values(), *special_tokens.values(), *added_tokens.values()])
        n_tokens = len(ranks) + len(special_tokens) + len(added_tokens)
        if max_id >= id_limit(n_tokens):
            token = next(key for table in (ranks, special_tokens, added_tokens) for key, i in table.items()
                         if i == max_id)
            raise VocabFormatError(_far_id_message(source, f"token {token!r} has the id {max_id}", n_tokens))
        if n_vocab is None:
            n_vocab = max_id + 1
        elif n_vocab <= max_id:
            raise VocabFormatError(f"{source}: n_vocab {n_vocab} is not above the largest id {max_id}")
        _check_n_vocab(source, n_vocab, n_tokens)
        self._set_fields(
            name=name, source=source, pipeline=pipeline, special_tokens=special_tokens, added_tokens=added_tokens,
            merges=merges, n_vocab=n_vocab, eos_token_id=eos_token_id,
            bos_token_id=bos_token_id, whole_piece_lookup=whole_piece_lookup, n_bpe=len(ranks),
            chat_template=chat_template, literal_flags=_checked_flags(source, literal_flags, special_tokens,
                                                                     added_tokens),
            unk_token_id=unk_token_id, fuse_unk=bool(fuse_unk), scores=scores,
        )
        set_(self, "_ranks", MappingProxyType(dict(ranks)))
        _check_scores(source, self.scores, lambda: max(ranks.values()) + 1, n_vocab)
        if packed_merges is not None:
            self._check_packed_merges()
        self._check_eos_bos()

    @classmethod
    def from_packed(
        cls,
        *,
        blob: bytes,
        ids: array,
        lengths: array,
        name: str,
        n_vocab: int,
        pattern: str | None = None,
        special_tokens: Mapping[str, int] | None = None,
        added_tokens: Mapping[str, int] | None = None,
        normalizer: str | Stage | None = None,
        pipeline: PipelineSpec | None = None,
        merges: Mapping[tuple[int, int], int] | bytes | None = None,
        eos_token_id: int | None = None,
        bos_token_id: int | None = None,
        whole_piece_lookup: bool = True,
        source: str | None = None,
        chat_template: str | None = None,
        literal_flags: Mapping[str, int] | None = None,
        unk_token_id: int | None = None,
        fuse_unk: bool = False,
        scores: Sequence[float] | None = None,
    ) -> Vocab:
        """A Vocab from BPE token ``ids`` (uint32 array) whose bytes are ``blob`` cut into
        ``lengths``; the other arguments are as for the constructor.

        With the native core built, the core's vocab tables check the tokens (ids unique and
        below ``n_vocab``, bytes unique) and the merges, and are kept for the
        tokenizers built on this Vocab; ``ranks`` (and ``merges``) become dicts only if
        something asks for them. Without it, this is the constructor on the unpacked dict.

        >>> v = Vocab.from_packed(blob=bytes(range(256)), ids=array("I", range(256)),
        ...                       lengths=array("I", [1] * 256), name="bytes", pattern=".", n_vocab=256)
        >>> v.ranks[b"a"], v.n_vocab
        (97, 256)
        """
        pipeline = pipeline_of(source or name, pattern, normalizer, pipeline)
        fields = dict(
            name=name, pipeline=pipeline, special_tokens=special_tokens, added_tokens=added_tokens,
            merges=merges, n_vocab=n_vocab, eos_token_id=eos_token_id,
            bos_token_id=bos_token_id, whole_piece_lookup=whole_piece_lookup, source=source,
            chat_template=chat_template, literal_flags=literal_flags,
            unk_token_id=unk_token_id, fuse_unk=fuse_unk, scores=scores,
        )
        if len(ids) != len(lengths) or sum(lengths) != len(blob):
            raise VocabFormatError(f"{source or name}: token lengths do not add up to the token bytes")
        # Before the native tables allocate n_vocab slots (the tables check each id < n_vocab).
        _check_n_vocab(source or name, n_vocab, len(ids) + len(special_tokens or {}) + len(added_tokens or {}))
        native = extension()
        if native is None:
            return cls(ranks=dict(zip(_cut(blob, lengths), ids)), **fields)
        self = cls.__new__(cls)
        source = source or name
        special_tokens, added_tokens = dict(special_tokens or {}), dict(added_tokens or {})
        _check_header(source, pipeline, special_tokens, added_tokens)
        self._set_fields(
            name=name, source=source, pipeline=pipeline, special_tokens=special_tokens, added_tokens=added_tokens,
            merges=merges, n_vocab=n_vocab, eos_token_id=eos_token_id,
            bos_token_id=bos_token_id, whole_piece_lookup=whole_piece_lookup, n_bpe=len(ids),
            chat_template=chat_template, literal_flags=_checked_flags(source, literal_flags, special_tokens,
                                                                     added_tokens),
            unk_token_id=unk_token_id, fuse_unk=bool(fuse_unk), scores=scores,
        )
        _check_scores(source, self.scores, lambda: max(ids, default=-1) + 1, n_vocab)
        object.__setattr__(self, "_packed", (blob, ids, lengths))
        try:
            self.native_tables()
        except VocabFormatError as exc:
            raise VocabFormatError(f"{source}: {exc}") from None
        if merges is not None:
            self._check_packed_merges()
        self._check_eos_bos()
        return self

    def renamed(self, name: str) -> Vocab:
        """The same vocabulary under another name (a new, validated Vocab).

        >>> from wordsplit import load_vocab
        >>> load_vocab("gpt2").renamed("my-gpt2").name
        'my-gpt2'
        """
        blob, ids, lengths = self.packed()
        return Vocab.from_packed(blob=blob, ids=ids, lengths=lengths, **{**self._fields(), "name": name})

    def _fields(self) -> dict:
        """Every constructor argument but the tokens."""
        fields = {
            key: getattr(self, key)
            for key in ("name", "pipeline", "n_vocab", "eos_token_id", "bos_token_id",
                        "whole_piece_lookup", "source", "chat_template", "unk_token_id", "fuse_unk", "scores")
        }
        fields.update(special_tokens=dict(self.special_tokens), added_tokens=dict(self.added_tokens),
                      literal_flags=dict(self.literal_flags), merges=self.packed_merges())
        return fields

    def _set_fields(self, *, special_tokens, added_tokens, merges, whole_piece_lookup, literal_flags, scores,
                    **fields) -> None:
        set_ = object.__setattr__
        set_(self, "scores", None if scores is None else _float_tuple(fields["source"], scores))
        set_(self, "literal_flags", MappingProxyType(literal_flags))
        for key, value in fields.items():
            set_(self, key, value)
        set_(self, "special_tokens", MappingProxyType(special_tokens))
        set_(self, "added_tokens", MappingProxyType(added_tokens))
        for key in ("_ranks", "_token_bytes", "_packed", "_native", "_hash", "_missing"):
            set_(self, key, None)
        packed = _checked_packed(fields["source"], merges)
        if packed is not None:
            set_(self, "_merges", None)
            set_(self, "_merges_packed", packed)
        else:
            set_(self, "_merges", None if merges is None else MappingProxyType(dict(merges)))
            set_(self, "_merges_packed", None)
        set_(self, "whole_piece_lookup", bool(whole_piece_lookup))

    def _check_packed_merges(self) -> None:
        """Check packed merges as :func:`_validate` checks a dict of them, in the native tables
        (built already); the first bad merge gets the same message."""
        packed = self.packed_merges()
        cut = merge_cut(self.pipeline.model)
        bad = extension().first_bad_merge(self.native_tables(), packed, cut)
        if bad is not None:
            left, right, rank = unpack_merge(packed, bad)
            by_id = {i: piece for piece, i in self.ranks.items()}
            _check_merge(self.source, by_id, self.ranks, left, right, rank, cut)

    @property
    def pattern(self) -> str | None:
        """The split regex, for a vocabulary split by one (tiktoken's ``pat_str``), else None."""
        return self.pipeline.pattern

    @property
    def normalizer(self) -> Stage:
        """The normalizer stage (:mod:`wordsplit.spec`)."""
        return self.pipeline.normalizer

    @property
    def merges(self) -> Mapping[tuple[int, int], int] | None:
        """The pair-ranked merges ``(left id, right id) → rank`` (read-only), or None for a
        rank-based vocabulary; a packed Vocab makes the dict on first use."""
        if self._merges is None and self._merges_packed is not None:
            object.__setattr__(self, "_merges", MappingProxyType(unpack_merges(self._merges_packed)))
        return self._merges

    @property
    def pair_ranked(self) -> bool:
        """Whether the merges are pair-ranked (:attr:`merges` is set), without making the dict."""
        return self._merges is not None or self._merges_packed is not None

    def packed_merges(self) -> bytes | None:
        """The pair-ranked merges as little-endian uint32 triples ``(left, right, rank)`` in
        :attr:`merges`' order, or None for a rank-based vocabulary."""
        if self._merges_packed is None and self._merges is not None:
            object.__setattr__(self, "_merges_packed", pack_merges(self._merges))
        return self._merges_packed

    def _check_eos_bos(self) -> None:
        for label, value in (("eos_token_id", self.eos_token_id), ("bos_token_id", self.bos_token_id),
                             ("unk_token_id", self.unk_token_id)):
            if value is not None and not (0 <= value < self.n_vocab and self._has_token(value)):
                raise VocabFormatError(f"{self.source}: {label} {value} is not a token id of this vocabulary")

    def _has_token(self, token_id: int) -> bool:
        if self._native is None:
            return self.token_bytes[token_id] is not None
        try:  # a packed Vocab: ask the native tables instead of building token_bytes
            self._native.decode_bytes([token_id])
        except KeyError:  # UnknownTokenError
            return False
        return True

    @property
    def ranks(self) -> Mapping[bytes, int]:
        """Bytes of every BPE token → its id (read-only)."""
        if self._ranks is None:  # a packed Vocab: made on first use
            blob, ids, lengths = self._packed
            object.__setattr__(self, "_ranks", MappingProxyType(dict(zip(_cut(blob, lengths), ids))))
        return self._ranks

    @property
    def token_bytes(self) -> tuple[bytes | None, ...]:
        """Bytes of each id (a special or added token's UTF-8 text); None for unused ids."""
        if self._token_bytes is None:
            table: list[bytes | None] = [None] * self.n_vocab
            for piece, i in self.ranks.items():
                table[i] = piece
            for text, i in (*self.special_tokens.items(), *self.added_tokens.items()):
                if table[i] is None:  # a shared special id decodes to its first literal
                    table[i] = text.encode("utf-8")
            object.__setattr__(self, "_token_bytes", tuple(table))
        return self._token_bytes

    @property
    def missing_bytes(self) -> bytes:
        """The bytes that no single-byte token spells, in order (empty for most vocabularies, and
        for the models over characters, which have their own unknown token).

        GPT-NeoX-family files and some GGUF files lack a few. Encoding drops such a byte from
        its piece before merging, as HF ``tokenizers`` does (``b"axb"`` merges as ``b"ab"``).
        Derived from the tokens, so it needs no field of its own.

        >>> Vocab(name="no-x", ranks={bytes([b]): b for b in range(256) if b != 120}, pattern=".").missing_bytes
        b'x'
        """
        model = self.pipeline.model
        if self._missing is None and not (isinstance(model, BytePairEncoding)
                                          or isinstance(model, SentencePieceBpe) and model.byte_fallback):
            # A model over characters (WordPiece, Unigram, WordLevel, SentencePiece BPE without
            # byte fallback) has its own unknown token.
            object.__setattr__(self, "_missing", b"")
        if self._missing is None:
            native = self.native_tables() if self._ranks is None else None
            if native is not None:  # a packed Vocab: the native tables know, no dict needed
                missing = bytes(native.missing_bytes())
            else:
                ranks = self.ranks
                missing = bytes(b for b in range(256) if bytes([b]) not in ranks)
            object.__setattr__(self, "_missing", missing)
        return self._missing

    def packed(self) -> tuple[bytes, array, array]:
        """``(blob, ids, lengths)``: the BPE tokens' bytes concatenated, their ids and their
        lengths as uint32 arrays (the form of the parsed-vocab cache and of the native tables)."""
        if self._packed is None:
            ids = array(U32, self.ranks.values())
            lengths = array(U32, map(len, self.ranks))
            object.__setattr__(self, "_packed", (b"".join(self.ranks), ids, lengths))
        return self._packed

    def native_tables(self):
        """The native core's vocab tables of this Vocab (built once, shared by every native
        tokenizer built on it), or None when the core is not built.

        Raises:
            VocabFormatError: the tokens break an invariant (only for :meth:`from_packed`;
                the constructor checked them already).
        """
        native = extension()
        if native is None:
            return None
        if self._native is None:
            blob, ids, lengths = self.packed()
            # BPE tokens, then the literals (decoded by id, never merged); one blob of bytes
            # plus uint32 ids and lengths is far cheaper to hand over than a tuple per token.
            literals = [(text.encode("utf-8"), i) for text, i in self.all_special_literals.items()]
            all_ids = ids + array(U32, [i for _, i in literals])
            all_lengths = lengths + array(U32, [len(text) for text, _ in literals])
            merges = self.packed_merges()
            tables = native.MergeTables(
                blob + b"".join(text for text, _ in literals), little_endian_bytes(all_ids),
                little_endian_bytes(all_lengths),
                b"\x01" * len(ids) + bytes(len(literals)), self.n_vocab, merges, self.whole_piece_lookup,
                self.name,
            )
            object.__setattr__(self, "_native", tables)
        return self._native

    def __reduce__(self):
        """Pickle packed (one blob of token bytes); unpickling checks it like any packed Vocab.

        >>> import pickle
        >>> v = Vocab(name="tiny", ranks={bytes([b]): b for b in range(256)}, pattern=".")
        >>> pickle.loads(pickle.dumps(v)).content_hash == v.content_hash
        True
        """
        blob, ids, lengths = self.packed()
        # A plug-in normalizer is registered again, in a fresh process, by importing its module.
        modules = tuple(sorted({module for name in plugin_normalizers(self.pipeline.normalizer)
                                if (module := getattr(NORMALIZERS.get(name), "__module__", None) or "")
                                and module != "__main__" and not module.startswith("wordsplit.")}))
        fields = {**self._fields(), "pipeline": self.pipeline.dumps()}  # (its one serialized form)
        return _unpickle_vocab, (blob, little_endian_bytes(ids), little_endian_bytes(lengths), fields, modules)

    def __setattr__(self, key, value):
        raise AttributeError(f"Vocab is immutable; build a new one instead of setting {key!r}")

    def __delattr__(self, key):
        raise AttributeError("Vocab is immutable")

    def __repr__(self) -> str:
        return (
            f"Vocab({self.name!r}, n_vocab={self.n_vocab}, bpe_tokens={self.n_bpe}, "
            f"special={len(self.special_tokens)}, added={len(self.added_tokens)}, "
            f"pipeline={self.pipeline.dumps()!r:.100}, merges={'pair-ranked' if self.pair_ranked else 'rank-based'})"
        )

    @property
    def content_hash(self) -> str:
        """A sha256 over everything that decides the ids; keys caches of derived tables."""
        if self._hash is None:
            h = sha256_hash()
            for piece, i in sorted(self.ranks.items(), key=lambda kv: kv[1]):
                h.update(i.to_bytes(4, "little") + len(piece).to_bytes(2, "little") + piece)
            for label, table in (("special", self.special_tokens), ("added", self.added_tokens)):
                h.update(repr((label, sorted(table.items()))).encode())
            h.update(repr((self.pipeline.dumps(), self.whole_piece_lookup)).encode())
            if self.literal_flags:  # (a vocabulary without flags keeps the hash it had without this field)
                h.update(repr(("flags", sorted(self.literal_flags.items()))).encode())
            if self.unk_token_id is not None and self.missing_bytes:  # only then does it change ids
                h.update(repr(("unk", self.unk_token_id, self.fuse_unk)).encode())
            if self.pair_ranked:
                h.update(repr(sorted(self.merges.items())).encode())
            if self.scores is not None:  # (float.hex: exact, and the same text on every platform)
                h.update(repr(("scores", [score.hex() for score in self.scores])).encode())
            object.__setattr__(self, "_hash", h.hexdigest())
        return self._hash

    @property
    def all_special_literals(self) -> dict[str, int]:
        """Special and added tokens together: every literal the special splitter may match."""
        return {**self.special_tokens, **self.added_tokens}


# HF's added-token flags, as bits of Vocab.literal_flags.
LSTRIP, RSTRIP, SINGLE_WORD, NORMALIZED = 1, 2, 4, 8
# llama.cpp's variant of LSTRIP/RSTRIP (its per-token attributes): with this bit they strip
# the whitespace of C's isspace in the "C" locale (C_WHITE_SPACE), byte by byte, not Unicode's.
C_SPACE = 16
C_WHITE_SPACE = frozenset(" \t\n\x0b\x0c\r")

# HF's added-vocabulary tests are `\w` and `\s` of Rust's regex crate: Unicode's word
# characters (Alphabetic, marks, decimal digits, connector punctuation, joiners; the `regex`
# module's `\w` is the same property) and White_Space (these 25 characters; Rust's
# char::is_whitespace on the native side). Not str.isspace, which also takes U+001C-U+001F.
WHITE_SPACE = frozenset("\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
                        "\u2009\u200a\u2028\u2029\u202f\u205f\u3000")


# The normalizer of a vocabulary whose ``normalized`` tokens are found before normalizing:
# no normalizer, or only ByteLevel's add_prefix_space (a pre-tokenizer step the loader runs as
# the normalizer's last step; HF puts its space before each piece the second pass leaves,
# which is what normalizing each of those pieces does).
RAW_SECOND_PASS_NORMALIZERS = (NoNormalizer(), NormalizerSequence((PrefixSpace(),)))


def second_pass_normalizes(normalizer: Stage, flags: Mapping[str, int]) -> bool:
    """Whether the ``normalized`` tokens of a vocabulary are found in the normalized text of
    each stretch (HF's second pass), rather than in the stretch as it is (the same text, for
    the normalizers of :data:`RAW_SECOND_PASS_NORMALIZERS`).

    >>> from wordsplit.spec import Nfc
    >>> second_pass_normalizes(Nfc(), {"<n>": NORMALIZED}), second_pass_normalizes(NoNormalizer(), {"<n>": NORMALIZED})
    (True, False)
    """
    return normalizer not in RAW_SECOND_PASS_NORMALIZERS and any(bits & NORMALIZED for bits in flags.values())


def normalized_contents(literals: Collection[str], flags: Mapping[str, int], normalize) -> dict[str, str]:
    """The text HF's second pass looks for, per ``normalized`` literal: its content as the
    normalizer makes it (HF normalizes each such token's content when it adds it).

    Raises:
        VocabFormatError: a content the normalizer makes empty (HF's matcher would then cut
            the text at arbitrary places), or two that it makes the same (HF then picks one
            of them at random in each process).

    >>> normalized_contents(["<N>", "x"], {"<N>": NORMALIZED}, str.lower)
    {'<N>': '<n>'}
    """
    contents: dict[str, str] = {}
    owner: dict[str, str] = {}
    for literal in literals:
        if not flags.get(literal, 0) & NORMALIZED:
            continue
        content = normalize(literal)
        if not isinstance(content, str):
            raise VocabFormatError(f"the normalizer made {type(content).__name__} of the added token {literal!r}, "
                                   "not a str")
        if not content:
            raise VocabFormatError(
                f"the normalizer makes the normalized added token {literal!r} empty, which HF cannot match; "
                "set its normalized flag to false or remove it"
            )
        if content in owner:
            raise VocabFormatError(
                f"the normalizer makes the normalized added tokens {owner[content]!r} and {literal!r} the same "
                f"text {content!r}, and HF then matches one or the other at random; remove one, or set its "
                "normalized flag to false"
            )
        owner[content] = literal
        contents[literal] = content
    return contents


def _float_tuple(source, scores) -> tuple[float, ...]:
    """``scores`` as a tuple of finite floats.

    >>> _float_tuple("tiny", [0, -1.5])
    (0.0, -1.5)
    """
    import math

    if isinstance(scores, (str, bytes)) or not hasattr(scores, "__iter__"):
        raise VocabFormatError(f"{source}: scores are a sequence of floats, one per token id, not "
                               f"{type(scores).__name__}")
    try:
        values = tuple(map(float, scores))
    except (TypeError, ValueError):
        raise VocabFormatError(f"{source}: scores are a sequence of floats, one per token id") from None
    if not all(map(math.isfinite, values)):
        index = next(i for i, value in enumerate(values) if not math.isfinite(value))
        raise VocabFormatError(f"{source}: the score of token {index} is {values[index]}, not a finite float")
    return values


def _check_scores(source, scores, n_model: Callable[[], int], n_vocab) -> None:
    """A score for every id below ``n_model()`` (the largest id of the tokens, plus one), and
    no more than ``n_vocab``. (``n_model`` is asked only of a vocabulary with scores: the
    largest of 200,000 ids takes milliseconds to find.)"""
    if scores is None:
        return
    n_model = n_model()
    if not n_model <= len(scores) <= n_vocab:
        raise VocabFormatError(
            f"{source}: {len(scores)} scores for tokens with ids up to {n_model - 1} and n_vocab {n_vocab}; a "
            "vocabulary with scores has one for every id up to its largest token id"
        )


def _checked_flags(source, flags, special_tokens, added_tokens) -> dict[str, int]:
    """``flags`` without zero entries, each naming a literal of the vocabulary."""
    checked = {}
    for text, bits in (flags or {}).items():
        if text not in special_tokens and text not in added_tokens:
            raise VocabFormatError(f"{source}: literal_flags names {text!r}, which is no special or added token")
        if type(bits) is not int or not 0 <= bits <= 31:
            raise VocabFormatError(f"{source}: literal_flags of {text!r} is {bits!r}; flags are an int 0-31")
        if bits:
            checked[text] = bits
    return checked


# Token ids and lengths travel as uint32 arrays, little-endian on the wire (the parsed-vocab
# cache, pickles, the native tables) whatever this machine's byte order.
U32 = "I" if array("I").itemsize == 4 else "L"  # 'I' is 4 bytes on every common platform


def little_endian_bytes(table: array) -> bytes:
    """The bytes of a uint32 array in little-endian order (the array itself is not changed)."""
    if sys.byteorder == "little":
        return table.tobytes()
    swapped = array(U32, table)
    swapped.byteswap()
    return swapped.tobytes()


def u32_array(data: bytes) -> array:
    """The uint32 array of little-endian ``data`` (the inverse of :func:`little_endian_bytes`)."""
    table = array(U32)
    table.frombytes(data)
    if sys.byteorder != "little":
        table.byteswap()
    return table


def _unpickle_vocab(blob: bytes, ids: bytes, lengths: bytes, fields: dict, modules: tuple[str, ...] = ()) -> Vocab:
    """The unpickler of :class:`Vocab` (uint32 arrays as little-endian bytes); ``modules`` are
    the plug-in modules to import first (the one registering its normalizer)."""
    import importlib

    for module in modules:
        importlib.import_module(module)
    fields = {**fields, "pipeline": PipelineSpec.loads(fields["pipeline"])}
    return Vocab.from_packed(blob=blob, ids=u32_array(ids), lengths=u32_array(lengths), **fields)


def _cut(blob: bytes, lengths: array) -> list[bytes]:
    """``blob`` cut into consecutive pieces of ``lengths``."""
    starts = list(accumulate(lengths, initial=0))
    return [blob[start:end] for start, end in zip(starts, starts[1:])]


# How far ids may run past the number of tokens. Real vocabularies are dense or nearly so
# (o200k_harmony: 201,088 ids for 201,087 tokens; GGUF pads with "unused" tokens, which are
# tokens), but every table indexed by id (decode, the native tables) has n_vocab slots, so one
# corrupt id of 4,000,000,000 would allocate tens of GB. An id or n_vocab beyond
# 2 x tokens + 65,536 is refused: memory stays proportional to the file, and the slack leaves
# room for small test vocabularies with special tokens at their real ids (50256, 100257...).
ID_SLACK = 1 << 16


def id_limit(n_tokens: int) -> int:
    """The bound every id of a vocabulary of ``n_tokens`` tokens stays below (and n_vocab at most).

    >>> id_limit(100_000)
    265536
    """
    return 2 * n_tokens + ID_SLACK


def _far_id_message(source, what: str, n_tokens: int) -> str:
    return (
        f"{source}: {what}, far beyond the {n_tokens} tokens of the vocabulary (ids must stay below "
        f"2 x tokens + {ID_SLACK} = {id_limit(n_tokens)}); the file is corrupt, or its ids are not token ids"
    )


def _check_n_vocab(source, n_vocab, n_tokens: int) -> None:
    if not isinstance(n_vocab, int) or isinstance(n_vocab, bool) or n_vocab < 1:
        raise VocabFormatError(f"{source}: n_vocab must be a positive int, not {n_vocab!r}")
    if n_vocab > id_limit(n_tokens):
        raise VocabFormatError(_far_id_message(source, f"n_vocab is {n_vocab}", n_tokens))


def pipeline_of(source, pattern, normalizer, pipeline) -> PipelineSpec:
    """The pipeline of a Vocab given ``pattern`` (and ``normalizer``) or ``pipeline``.

    >>> pipeline_of("tiny", ".", "nfc", None).normalizer
    Nfc()
    """
    if pipeline is not None:
        if pattern is not None or normalizer is not None:
            raise VocabFormatError(f"{source}: give pipeline= alone, or pattern= (and normalizer=), not both")
        if not isinstance(pipeline, PipelineSpec):
            raise VocabFormatError(f"{source}: pipeline must be a wordsplit.spec.PipelineSpec, not "
                                   f"{type(pipeline).__name__}")
        return pipeline
    if not isinstance(pattern, str):
        raise VocabFormatError(f"{source}: pattern must be the split regex (a str), not {type(pattern).__name__}; "
                               "a pipeline of another kind is given as pipeline=")
    if normalizer is None or isinstance(normalizer, str):
        normalizer = normalizer_from_name(normalizer or "none")
    return PipelineSpec(spanner=RegexSplit(pattern), normalizer=normalizer)


def plugin_normalizers(normalizer: Stage) -> list[str]:
    """The names of the plug-in normalizers a normalizer stage runs (itself, or before Metaspace)."""
    if isinstance(normalizer, Metaspace):
        normalizer = normalizer.before
    return [normalizer.name] if isinstance(normalizer, PluginNormalizer) else []


def _check_normalizer(source, pipeline: PipelineSpec) -> None:
    for name in plugin_normalizers(pipeline.normalizer):
        if name not in NORMALIZERS:
            raise VocabFormatError(
                f"{source}: unknown normalizer {name!r}; known: {', '.join(NORMALIZERS.names())} "
                "(add one with wordsplit.register_normalizer)"
            )


def _check_header(source, pipeline, special_tokens, added_tokens) -> None:
    """The checks that do not need the BPE tokens: the normalizer and the literals."""
    _check_normalizer(source, pipeline)
    _check_ids(source, {}, special_tokens, added_tokens)


def _validate(source, ranks, special_tokens, added_tokens, pipeline, merges) -> None:
    """Check the invariants every encoder relies on; raise VocabFormatError on the first failure."""
    _check_normalizer(source, pipeline)
    if not ranks:
        raise VocabFormatError(f"{source}: the vocabulary has no BPE tokens")
    _check_ids(source, ranks, special_tokens, added_tokens)
    if merges is not None:
        by_id = {i: piece for piece, i in ranks.items()}
        cut = merge_cut(pipeline.model)
        for (left, right), rank in merges.items():
            _check_merge(source, by_id, ranks, left, right, rank, cut)


def merge_cut(model: Stage) -> int:
    """The bytes a merge drops from the start of its right token: the length of HF's BPE
    ``continuing_subword_prefix`` (a merge of ``a`` and ``##b`` makes ``ab``), else 0.

    >>> from wordsplit.spec import CharacterBpe
    >>> merge_cut(CharacterBpe(continuing_subword_prefix="##"))
    2
    """
    return len(model.continuing_subword_prefix.encode("utf-8")) if isinstance(model, CharacterBpe) else 0


def _check_merge(source, by_id, ranks, left, right, rank, cut: int = 0) -> None:
    """A merge names two BPE tokens whose bytes together (the right one's after its first
    ``cut``, :func:`merge_cut`) are a BPE token."""
    if left not in by_id or right not in by_id:
        raise VocabFormatError(f"{source}: merge #{rank} ({left}, {right}) names an id that is not a BPE token")
    if by_id[left] + by_id[right][cut:] not in ranks:
        raise VocabFormatError(
            f"{source}: merge #{rank} {by_id[left]!r} + {by_id[right]!r} makes a token that is not in "
            "the vocabulary"
        )


def _checked_packed(source, merges) -> bytes | None:
    """``merges`` as bytes when they are packed (:func:`pack_merges`), else None."""
    if not isinstance(merges, (bytes, bytearray, memoryview)):
        return None
    if len(merges) % 12:
        raise VocabFormatError(f"{source}: packed merges are uint32 triples; {len(merges)} bytes are not")
    return bytes(merges)


def pack_merges(merges: Mapping[tuple[int, int], int]) -> bytes:
    """Pair-ranked merges as little-endian uint32 triples ``(left, right, rank)``.

    >>> unpack_merges(pack_merges({(1, 2): 0, (3, 4): 1}))
    {(1, 2): 0, (3, 4): 1}
    """
    table = array(U32)
    for (left, right), rank in merges.items():
        table.extend((left, right, rank))
    return little_endian_bytes(table)


def unpack_merges(data: bytes) -> dict[tuple[int, int], int]:
    """The dict of packed merges (:func:`pack_merges`); a repeated pair keeps its last rank."""
    table = iter(u32_array(bytes(data)))
    return {(left, right): rank for left, right, rank in zip(table, table, table)}


def unpack_merge(data: bytes, index: int) -> tuple[int, int, int]:
    """Merge ``index`` of packed merges: ``(left, right, rank)``."""
    return tuple(u32_array(bytes(data[12 * index: 12 * index + 12])))


def _check_ids(source, ranks, special_tokens, added_tokens) -> None:
    """Ids are non-negative ints, unique across BPE, special and added tokens, with two
    exceptions: two special literals may share an id (o200k_harmony's ``<|endofprompt|>`` and
    ``<|reserved_200018|>`` are both 200018, as in tiktoken), and a literal may have the id of
    a BPE token (HF gives an added token that is also in the model's vocab that token's id;
    the id then decodes as the BPE token). Literals are non-empty strings."""
    bpe_ids = ranks.values()
    # Fast path over the 100k–260k BPE tokens: C-level set operations instead of a loop.
    if set(map(type, bpe_ids)) == {int} and min(bpe_ids) >= 0 and len(bpe_id_set := set(bpe_ids)) == len(ranks):
        seen: dict[int, tuple[str, object]] = {}
        tables = (("special token", special_tokens), ("added token", added_tokens))
    else:
        seen = {}
        tables = (("token", ranks), ("special token", special_tokens), ("added token", added_tokens))
        bpe_id_set = set()
    for kind, table in tables:
        for key, i in table.items():
            if not isinstance(i, int) or isinstance(i, bool) or i < 0:
                raise VocabFormatError(f"{source}: {kind} {key!r} has an invalid id {i!r}")
            if kind != "token" and (not isinstance(key, str) or not key):
                raise VocabFormatError(f"{source}: {kind} {key!r} must be a non-empty string")
            if i in bpe_id_set:  # a literal naming a BPE token
                continue
            if i in seen:
                if seen[i][0] == "token" and kind != "token":
                    continue
                if not (kind == "special token" and seen[i][0] == kind):
                    raise VocabFormatError(f"{source}: id {i} is used twice: by {seen[i][1]!r} and by {kind} {key!r}")
                continue
            seen[i] = (kind, key)
