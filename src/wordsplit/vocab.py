"""Vocab: everything a vocabulary file says, validated once and then immutable.

A Vocab holds *what* to tokenize with: the bytes of every BPE token (its id is its rank),
the special tokens and the non-special added tokens, the split pattern, the normalizer and
the eos/bos ids; for HF files whose merge list is not ordered by merged id, also the
pair-ranked merge table. It does not know *how* to encode; that is the job of the spanners
and encoders that :class:`~wordsplit.options.TokenizerOptions` composes.

>>> v = Vocab(name="tiny", ranks={bytes([b]): b for b in range(256)}, pattern=r"\\S+|\\s+")
>>> v.n_vocab
256
"""

from __future__ import annotations

import hashlib
from types import MappingProxyType
from typing import Mapping

from .errors import VocabFormatError

NORMALIZER_NAMES = ("none", "nfc")


class Vocab:
    """An immutable, validated vocabulary.

    Args:
        name: a short name for messages (``"qwen3"``, a file name...).
        ranks: bytes of every BPE token → its id. Lower id = merged earlier (tiktoken rule).
        pattern: the pre-tokenizer split regex (``\\p{..}`` classes allowed).
        special_tokens: special token text → id; encode follows tiktoken's policy for them.
        added_tokens: non-special added token text → id; always matched in text (as HF does).
        normalizer: ``"none"`` or ``"nfc"``.
        merges: pair-ranked merges ``(left id, right id) → merge rank``, only for files whose
            merge order is not the merged-id order (HF semantics); ``None`` means rank-based.
        n_vocab: the declared vocabulary size, at least ``max id + 1``.
        eos_token_id, bos_token_id: as the file declares them, or ``None``.
        whole_piece_lookup: a piece that is itself a token is one lookup (tiktoken, and HF
            with ``ignore_merges``); off only for pair-ranked files without ``ignore_merges``.
        source: where it came from, for error messages.

    Ids below ``n_vocab`` that no token uses (gaps, GGUF's unused padding) decode as errors.

    Raises:
        VocabFormatError: naming ``source`` and the offending entry.
    """

    __slots__ = (
        "name", "ranks", "pattern", "special_tokens", "added_tokens", "normalizer", "merges",
        "n_vocab", "eos_token_id", "bos_token_id", "whole_piece_lookup", "source",
        "token_bytes", "_hash", "__weakref__",
    )

    def __init__(
        self,
        *,
        name: str,
        ranks: Mapping[bytes, int],
        pattern: str,
        special_tokens: Mapping[str, int] | None = None,
        added_tokens: Mapping[str, int] | None = None,
        normalizer: str = "none",
        merges: Mapping[tuple[int, int], int] | None = None,
        n_vocab: int | None = None,
        eos_token_id: int | None = None,
        bos_token_id: int | None = None,
        whole_piece_lookup: bool = True,
        source: str | None = None,
    ) -> None:
        set_ = object.__setattr__
        source = source or name
        special_tokens = dict(special_tokens or {})
        added_tokens = dict(added_tokens or {})
        _validate(source, ranks, special_tokens, added_tokens, normalizer, merges)
        max_id = max([*ranks.values(), *special_tokens.values(), *added_tokens.values()])
        if n_vocab is None:
            n_vocab = max_id + 1
        elif n_vocab <= max_id:
            raise VocabFormatError(f"{source}: n_vocab {n_vocab} is not above the largest id {max_id}")
        token_bytes: list[bytes | None] = [None] * n_vocab
        for piece, i in ranks.items():
            token_bytes[i] = piece
        for text, i in (*special_tokens.items(), *added_tokens.items()):
            if token_bytes[i] is None:  # a shared special id decodes to its first literal
                token_bytes[i] = text.encode("utf-8")
        for label, value in (("eos_token_id", eos_token_id), ("bos_token_id", bos_token_id)):
            if value is not None and not (0 <= value < n_vocab and token_bytes[value] is not None):
                raise VocabFormatError(f"{source}: {label} {value} is not a token id of this vocabulary")
        set_(self, "name", name)
        set_(self, "source", source)
        set_(self, "ranks", MappingProxyType(dict(ranks)))
        set_(self, "pattern", pattern)
        set_(self, "special_tokens", MappingProxyType(special_tokens))
        set_(self, "added_tokens", MappingProxyType(added_tokens))
        set_(self, "normalizer", normalizer)
        set_(self, "merges", None if merges is None else MappingProxyType(dict(merges)))
        set_(self, "n_vocab", n_vocab)
        set_(self, "eos_token_id", eos_token_id)
        set_(self, "bos_token_id", bos_token_id)
        set_(self, "whole_piece_lookup", bool(whole_piece_lookup))
        set_(self, "token_bytes", tuple(token_bytes))
        set_(self, "_hash", None)

    def __setattr__(self, key, value):
        raise AttributeError(f"Vocab is immutable; build a new one instead of setting {key!r}")

    def __delattr__(self, key):
        raise AttributeError("Vocab is immutable")

    def __repr__(self) -> str:
        return (
            f"Vocab({self.name!r}, n_vocab={self.n_vocab}, bpe_tokens={len(self.ranks)}, "
            f"special={len(self.special_tokens)}, added={len(self.added_tokens)}, "
            f"normalizer={self.normalizer!r}, merges={'pair-ranked' if self.merges else 'rank-based'})"
        )

    @property
    def content_hash(self) -> str:
        """A sha256 over everything that decides the ids; keys caches of derived tables."""
        if self._hash is None:
            h = hashlib.sha256()
            for piece, i in sorted(self.ranks.items(), key=lambda kv: kv[1]):
                h.update(i.to_bytes(4, "little") + len(piece).to_bytes(2, "little") + piece)
            for label, table in (("special", self.special_tokens), ("added", self.added_tokens)):
                h.update(repr((label, sorted(table.items()))).encode())
            h.update(repr((self.pattern, self.normalizer, self.whole_piece_lookup)).encode())
            if self.merges is not None:
                h.update(repr(sorted(self.merges.items())).encode())
            object.__setattr__(self, "_hash", h.hexdigest())
        return self._hash

    @property
    def all_special_literals(self) -> dict[str, int]:
        """Special and added tokens together: every literal the special splitter may match."""
        return {**self.special_tokens, **self.added_tokens}


def _validate(source, ranks, special_tokens, added_tokens, normalizer, merges) -> None:
    """Check the invariants every encoder relies on; raise VocabFormatError on the first failure."""
    if normalizer not in NORMALIZER_NAMES:
        raise VocabFormatError(f"{source}: unknown normalizer {normalizer!r}; known: {', '.join(NORMALIZER_NAMES)}")
    if not ranks:
        raise VocabFormatError(f"{source}: the vocabulary has no BPE tokens")
    missing = [b for b in range(256) if bytes([b]) not in ranks]
    if missing:
        raise VocabFormatError(
            f"{source}: byte-level BPE needs a token for each of the 256 bytes; "
            f"missing {len(missing)}, first 0x{missing[0]:02x}"
        )
    _check_ids(source, ranks, special_tokens, added_tokens)
    if merges is not None:
        by_id = {i: piece for piece, i in ranks.items()}
        for (left, right), rank in merges.items():
            if left not in by_id or right not in by_id:
                raise VocabFormatError(f"{source}: merge #{rank} ({left}, {right}) names an id that is not a BPE token")
            if by_id[left] + by_id[right] not in ranks:
                raise VocabFormatError(
                    f"{source}: merge #{rank} {by_id[left]!r} + {by_id[right]!r} makes a token that is not in the vocabulary"
                )


def _check_ids(source, ranks, special_tokens, added_tokens) -> None:
    """Ids are non-negative ints, unique across BPE, special and added tokens (two special
    literals may share an id: o200k_harmony's ``<|endofprompt|>`` and ``<|reserved_200018|>``
    are both 200018, as in tiktoken); literals are non-empty strings."""
    bpe_ids = ranks.values()
    # Fast path over the 100k–200k BPE tokens: C-level set operations instead of a loop.
    if {type(i) for i in bpe_ids} == {int} and min(bpe_ids) >= 0 and len(set(bpe_ids)) == len(ranks):
        seen: dict[int, tuple[str, object]] = {}
        tables = (("special token", special_tokens), ("added token", added_tokens))
        bpe_id_set = set(bpe_ids)
    else:
        seen = {}
        tables = (("token", ranks), ("special token", special_tokens), ("added token", added_tokens))
        bpe_id_set = set()
    for kind, table in tables:
        for key, i in table.items():
            if not isinstance(i, int) or isinstance(i, bool) or i < 0:
                raise VocabFormatError(f"{source}: {kind} {key!r} has an invalid id {i!r}")
            if i in bpe_id_set:
                token = next(piece for piece, j in ranks.items() if j == i)
                raise VocabFormatError(f"{source}: id {i} is used twice: by {token!r} and by {kind} {key!r}")
            if i in seen:
                if not (kind == "special token" and seen[i][0] == kind):
                    raise VocabFormatError(f"{source}: id {i} is used twice: by {seen[i][1]!r} and by {kind} {key!r}")
                continue
            seen[i] = (kind, key)
            if kind != "token" and (not isinstance(key, str) or not key):
                raise VocabFormatError(f"{source}: {kind} {key!r} must be a non-empty string")
