"""HF ``tokenizer.json`` files whose BPE model is not plain byte-level BPE: an
``end_of_word_suffix`` (CLIP's ``</w>``), a ``continuing_subword_prefix``, or BPE over
characters with the unknown token (files without a ``ByteLevel`` pre-tokenizer: the tokenizers
quicktour's, Tortoise TTS's); and the SentencePiece BPE models without byte fallback that
transformers' converters write (NLLB, mBART, M2M100: a ``Metaspace`` pre-tokenizer, a
character that is no token the unknown one), :func:`read_hf_metaspace_bpe`.

Read into a :class:`~wordsplit.spec.CharacterBpe` model: the vocab's tokens (byte-level ones
as their bytes, with a ByteLevel pre-tokenizer; else their text), the merge list as the
vocabulary's pair-ranked merges (a pair listed twice has its last rank, as HF's map of them
keeps), ``unk_token``, ``fuse_unk``, the suffix and the prefix; the normalizer and
post-processor as for any tokenizer.json; the pre-tokenizer as for byte-level files (a
``ByteLevel`` last) or as for word models (splits only); the ``ByteLevel`` decoder, or none
(the tokens joined by spaces). What HF's BPE has beyond that is refused: ``dropout`` (not
deterministic), ``ignore_merges``, other decoders; and what HF itself fails on or has no one
answer for: a merge whose right token is shorter than the prefix or cut by it inside a
character (HF panics loading it), ``unk_token: ""``, a byte-level file whose prefix or suffix
is not printable ASCII (its bytes would differ from its text's).
"""

from __future__ import annotations

from typing import Any, Mapping

from ..errors import UnsupportedTokenizerError, VocabFormatError
from ..post_processor_programs import post_processor_stage
from ..spec import ByteLevel, CharacterBpe, NoDecoder, PipelineSpec, RegexSplit, Stage
from ..vocab import Vocab

__all__ = ["is_character_bpe", "read_hf_character_bpe", "read_hf_metaspace_bpe"]


def _has_byte_level(pre_tokenizer: Any) -> bool:
    if not isinstance(pre_tokenizer, dict):
        return False
    if pre_tokenizer.get("type") == "Sequence":
        return any(_has_byte_level(step) for step in pre_tokenizer.get("pretokenizers") or [])
    return pre_tokenizer.get("type") == "ByteLevel"


def is_character_bpe(spec: Mapping[str, Any]) -> bool:
    """Whether a (non-SentencePiece-style) BPE tokenizer.json is read here: it has an
    end-of-word suffix or a continuing-subword prefix, or no ByteLevel pre-tokenizer (its
    symbols are characters)."""
    model = spec["model"]
    return bool(model.get("end_of_word_suffix")) or bool(model.get("continuing_subword_prefix")) \
        or not _has_byte_level(spec.get("pre_tokenizer"))


def _check_options(model: Mapping[str, Any], byte_level: bool, source: str) -> None:
    dropout = model.get("dropout")
    if dropout not in (None, 0, 0.0):
        raise UnsupportedTokenizerError(
            f"{source}: BPE dropout={dropout!r} makes a text's ids random (each encode drops merges by chance); "
            "wordsplit gives one deterministic answer: set dropout to null, as at inference"
        )
    if model.get("ignore_merges") not in (None, False):
        raise UnsupportedTokenizerError(f"{source}: BPE ignore_merges={model['ignore_merges']!r} with a "
                                        "character-level BPE is not supported")
    for key in ("unk_token", "end_of_word_suffix", "continuing_subword_prefix"):
        if model.get(key) is not None and not isinstance(model.get(key), str):
            raise VocabFormatError(f"{source}: BPE {key} must be a string or null")
    if model.get("unk_token") == "":
        raise UnsupportedTokenizerError(
            f"{source}: BPE unk_token \"\" is a token HF looks up (and fails on when a character has no token), "
            "not the absence of one; set unk_token to null, or to a token of the vocab"
        )
    for key in ("end_of_word_suffix", "continuing_subword_prefix"):
        affix = model.get(key) or ""
        if byte_level and not all("!" <= char <= "~" for char in affix):
            raise UnsupportedTokenizerError(
                f"{source}: BPE {key}={affix!r} with a ByteLevel pre-tokenizer: only printable ASCII is the same "
                "bytes as byte-level text and as UTF-8"
            )


def read_hf_character_bpe(spec: Mapping[str, Any], *, source: str, name: str, eos_token: str | None = None) -> Vocab:
    """The vocabulary of a parsed tokenizer.json read here (see :func:`is_character_bpe`).

    Raises:
        VocabFormatError: malformed entries.
        UnsupportedTokenizerError: an option or stage wordsplit does not run with such a model.
    """
    from .hf import _added_tokens, _check_added_tokens, _hf_added_ids, _normalizer, _pattern
    from .hf_word_models import _spanner, vocab_ranks

    model = spec["model"]
    byte_level = _has_byte_level(spec.get("pre_tokenizer"))
    _check_options(model, byte_level, source)
    table = model.get("vocab")
    ranks = vocab_ranks(table, source, byte_level)
    prefix = model.get("continuing_subword_prefix") or ""
    merges = _merges(model.get("merges"), table, ranks, prefix, byte_level, source)
    special, added, flags = _added_tokens(spec.get("added_tokens"), source)
    special, added = _hf_added_ids(spec.get("added_tokens") or [], special, added, table, source)
    normalizer = _normalizer(spec.get("normalizer"), source)
    _check_added_tokens([*special, *added], flags, normalizer, source)
    if byte_level:
        spanner, prefix_space = _pattern(spec.get("pre_tokenizer"), source)
        if prefix_space:
            normalizer = _normalizer(spec.get("normalizer"), source, prefix_space)
    else:
        spanner = _spanner(spec.get("pre_tokenizer"), source, "character-level BPE")
    pipeline = PipelineSpec(
        spanner=RegexSplit(spanner) if isinstance(spanner, str) else spanner, normalizer=normalizer,
        model=CharacterBpe(model.get("unk_token") or "", bool(model.get("fuse_unk")),
                           model.get("end_of_word_suffix") or "", byte_level, prefix),
        decoder=_decoder(spec.get("decoder"), byte_level, source),
        post_processor=post_processor_stage(spec.get("post_processor"), source),
    )
    literals = {**special, **added}
    return Vocab(name=name, ranks=ranks, pipeline=pipeline, special_tokens=special, added_tokens=added,
                 merges=merges, eos_token_id=literals.get(eos_token) if eos_token else None, source=source,
                 literal_flags=flags)


def read_hf_metaspace_bpe(spec: Mapping[str, Any], *, source: str, name: str, eos_token: str | None = None) -> Vocab:
    """The vocabulary of a parsed tokenizer.json with a BPE model without ``byte_fallback`` and
    the stages of a file converted from a SentencePiece model (:mod:`.hf_metaspace`: a
    ``Precompiled`` normalizer, a ``Metaspace`` pre-tokenizer and decoder), as transformers
    writes them for NLLB, mBART or M2M100: HF's BPE over each ``▁``-led word's characters, a
    character that is no token the ``unk_token`` (a run of them one, with ``fuse_unk``), then the
    file's merges by rank (:class:`~wordsplit.spec.CharacterBpe`).

    >>> data = {"model": {"type": "BPE", "unk_token": "<unk>", "fuse_unk": True,
    ...                   "vocab": {"<unk>": 0, "▁": 1, "a": 2, "b": 3, "▁a": 4, "▁ab": 5}, "merges": ["▁ a", "▁a b"]},
    ...         "pre_tokenizer": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": True},
    ...         "decoder": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": True}}
    >>> vocab = read_hf_metaspace_bpe(data, source="tiny.json", name="tiny")
    >>> vocab.pipeline.model.unk_token, vocab.pipeline.model.fuse_unk, vocab.pipeline.spanner.kind
    ('<unk>', True, 'SentencePiece')

    Raises:
        VocabFormatError: malformed entries.
        UnsupportedTokenizerError: an option or stage wordsplit does not run with such a model.
    """
    from .hf import _added_tokens, _hf_added_ids
    from .hf_metaspace import metaspace_stages, pre_tokenizer_kinds
    from .hf_word_models import vocab_ranks

    words = "a BPE model without byte_fallback"
    model = spec["model"]
    kinds = pre_tokenizer_kinds(spec.get("pre_tokenizer"), source, words)  # (what is not supported, named first)
    _check_options(model, False, source)
    table = model.get("vocab")
    ranks = vocab_ranks(table, source)
    prefix = model.get("continuing_subword_prefix") or ""
    merges = _merges(model.get("merges"), table, ranks, prefix, False, source)
    special, added, flags = _added_tokens(spec.get("added_tokens"), source)
    special, added = _hf_added_ids(spec.get("added_tokens") or [], special, added, table, source)
    normalizer, spanner, decoder = metaspace_stages(spec, kinds, table, [*special, *added], flags, source, words)
    pipeline = PipelineSpec(
        spanner=spanner, normalizer=normalizer,
        model=CharacterBpe(model.get("unk_token") or "", bool(model.get("fuse_unk")),
                           model.get("end_of_word_suffix") or "", False, prefix),
        decoder=decoder,
        post_processor=post_processor_stage(spec.get("post_processor"), source),
    )
    literals = {**special, **added}
    return Vocab(name=name, ranks=ranks, pipeline=pipeline, special_tokens=special, added_tokens=added,
                 merges=merges, eos_token_id=literals.get(eos_token) if eos_token else None, source=source,
                 literal_flags=flags)


def _merges(value: Any, table: Mapping[str, int], ranks: Mapping[bytes, int], prefix: str, byte_level: bool,
            source: str) -> dict[tuple[int, int], int]:
    """The merge list as ``(left id, right id) → rank``; a pair listed twice has its last rank
    (HF collects the list into a map). Each merge makes the token HF's ``BpeBuilder`` makes:
    the left token's text and the right one's after the prefix's length in UTF-8 bytes, which
    must be a vocab entry, and (checked here) the token of the left one's bytes and the right
    one's after the same count of bytes, the encoders' rule (:func:`wordsplit.vocab.merge_cut`).
    """
    if not isinstance(value, list):
        raise VocabFormatError(f"{source}: model.merges must be a list")
    cut = len(prefix.encode("utf-8"))
    merges: dict[tuple[int, int], int] = {}
    for rank, merge in enumerate(value):
        parts = merge.split(" ") if isinstance(merge, str) else merge
        if not isinstance(parts, list) or len(parts) != 2 or not all(isinstance(p, str) for p in parts):
            raise VocabFormatError(f"{source}: merge #{rank} {merge!r} is not a pair of tokens")
        left, right = parts
        if left not in table or right not in table:
            raise VocabFormatError(f"{source}: merge #{rank} {left!r} + {right!r} names a token the vocab does not "
                                   "have")
        tail = right.encode("utf-8")[cut:]
        try:
            made = left + tail.decode("utf-8")
        except UnicodeDecodeError:
            made = None
        if len(right.encode("utf-8")) < cut or made is None:
            raise VocabFormatError(
                f"{source}: merge #{rank} {left!r} + {right!r}: the right token is shorter than the "
                f"continuing_subword_prefix {prefix!r} or cut by it inside a character (HF fails to load it)"
            )
        if made not in table:
            raise VocabFormatError(f"{source}: merge #{rank} {left!r} + {right!r} makes {made!r}, which is not in "
                                   "the vocab")
        if byte_level:
            from .bytelevel import token_bytes

            pair = token_bytes(left), token_bytes(right)
            if ranks.get(pair[0] + pair[1][cut:]) != table[made]:
                raise UnsupportedTokenizerError(
                    f"{source}: merge #{rank} {left!r} + {right!r} makes {made!r}, which is not the token of "
                    "their bytes (the right one's after the prefix)"
                )
        else:
            pair = left.encode("utf-8"), right.encode("utf-8")
        merges[(ranks[pair[0]], ranks[pair[1]])] = rank
    return merges


def _decoder(value: Any, byte_level: bool, source: str) -> Stage:
    if value is None:
        return NoDecoder()
    if isinstance(value, dict) and value.get("type") == "ByteLevel" and byte_level:
        return ByteLevel()
    kind = value.get("type") if isinstance(value, dict) else value
    raise UnsupportedTokenizerError(f"{source}: decoder {kind!r} with this BPE model is not supported (ByteLevel for a "
                                    "byte-level one, or none)")
