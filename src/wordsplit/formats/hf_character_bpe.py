"""HF ``tokenizer.json`` files whose BPE model is not plain byte-level BPE: an
``end_of_word_suffix`` (CLIP's ``</w>``), or BPE over characters with the unknown token (files
without a ``ByteLevel`` pre-tokenizer: the tokenizers quicktour's, Tortoise TTS's).

Read into a :class:`~wordsplit.spec.CharacterBpe` model: the vocab's tokens (byte-level ones
as their bytes, with a ByteLevel pre-tokenizer; else their text), the merge list as the
vocabulary's pair-ranked merges, ``unk_token`` and ``fuse_unk``; the normalizer and
post-processor as for any tokenizer.json; the pre-tokenizer as for byte-level files (a
``ByteLevel`` last) or as for word models (splits only); the ``ByteLevel`` decoder, or none
(the tokens joined by spaces). What HF's BPE has beyond that is refused: ``dropout`` (not
deterministic), ``continuing_subword_prefix``, ``ignore_merges``, other decoders.
"""

from __future__ import annotations

from typing import Any, Mapping

from ..errors import UnsupportedTokenizerError, VocabFormatError
from ..post_processor_programs import post_processor_stage
from ..spec import ByteLevel, CharacterBpe, NoDecoder, PipelineSpec, RegexSplit, Stage
from ..vocab import Vocab

__all__ = ["is_character_bpe", "read_hf_character_bpe"]


def _has_byte_level(pre_tokenizer: Any) -> bool:
    if not isinstance(pre_tokenizer, dict):
        return False
    if pre_tokenizer.get("type") == "Sequence":
        return any(_has_byte_level(step) for step in pre_tokenizer.get("pretokenizers") or [])
    return pre_tokenizer.get("type") == "ByteLevel"


def is_character_bpe(spec: Mapping[str, Any]) -> bool:
    """Whether a (non-SentencePiece-style) BPE tokenizer.json is read here: it has an
    end-of-word suffix, or no ByteLevel pre-tokenizer (its symbols are characters)."""
    model = spec["model"]
    return bool(model.get("end_of_word_suffix")) or not _has_byte_level(spec.get("pre_tokenizer"))


def _check_options(model: Mapping[str, Any], source: str) -> None:
    dropout = model.get("dropout")
    if dropout not in (None, 0, 0.0):
        raise UnsupportedTokenizerError(
            f"{source}: BPE dropout={dropout!r} makes a text's ids random (each encode drops merges by chance); "
            "wordsplit gives one deterministic answer: set dropout to null, as at inference"
        )
    for key in ("continuing_subword_prefix", "ignore_merges"):
        if model.get(key) not in (None, "", False):
            raise UnsupportedTokenizerError(f"{source}: BPE {key}={model[key]!r} with a character-level BPE is not "
                                            "supported")
    for key in ("unk_token", "end_of_word_suffix"):
        if model.get(key) is not None and not isinstance(model.get(key), str):
            raise VocabFormatError(f"{source}: BPE {key} must be a string or null")


def read_hf_character_bpe(spec: Mapping[str, Any], *, source: str, name: str, eos_token: str | None = None) -> Vocab:
    """The vocabulary of a parsed tokenizer.json read here (see :func:`is_character_bpe`).

    Raises:
        VocabFormatError: malformed entries.
        UnsupportedTokenizerError: an option or stage wordsplit does not run with such a model.
    """
    from .hf import _added_tokens, _check_added_tokens, _hf_added_ids, _normalizer, _pattern
    from .hf_word_models import _spanner, vocab_ranks

    model = spec["model"]
    _check_options(model, source)
    table = model.get("vocab")
    byte_level = _has_byte_level(spec.get("pre_tokenizer"))
    ranks = vocab_ranks(table, source, byte_level)
    merges = _merges(model.get("merges"), ranks, byte_level, source)
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
                           model.get("end_of_word_suffix") or "", byte_level),
        decoder=_decoder(spec.get("decoder"), byte_level, source),
        post_processor=post_processor_stage(spec.get("post_processor"), source),
    )
    literals = {**special, **added}
    return Vocab(name=name, ranks=ranks, pipeline=pipeline, special_tokens=special, added_tokens=added,
                 merges=merges, eos_token_id=literals.get(eos_token) if eos_token else None, source=source,
                 literal_flags=flags)


def _merges(value: Any, ranks: Mapping[bytes, int], byte_level: bool, source: str) -> dict[tuple[int, int], int]:
    """The merge list as ``(left id, right id) → rank``; the first listing of a pair counts."""
    from .hf import _merge_pairs

    if byte_level:
        pairs = _merge_pairs(value, source)
    else:
        if not isinstance(value, list):
            raise VocabFormatError(f"{source}: model.merges must be a list")
        pairs = []
        for rank, merge in enumerate(value):
            parts = merge.split(" ") if isinstance(merge, str) else merge
            if not isinstance(parts, list) or len(parts) != 2 or not all(isinstance(p, str) for p in parts):
                raise VocabFormatError(f"{source}: merge #{rank} {merge!r} is not a pair of tokens")
            pairs.append((parts[0].encode("utf-8"), parts[1].encode("utf-8")))
    merges: dict[tuple[int, int], int] = {}
    for rank, (left, right) in enumerate(pairs):
        if left not in ranks or right not in ranks or left + right not in ranks:
            raise VocabFormatError(
                f"{source}: merge #{rank} {left!r} + {right!r} names a token the vocab does not have"
            )
        merges.setdefault((ranks[left], ranks[right]), rank)
    return merges


def _decoder(value: Any, byte_level: bool, source: str) -> Stage:
    if value is None:
        return NoDecoder()
    if isinstance(value, dict) and value.get("type") == "ByteLevel" and byte_level:
        return ByteLevel()
    kind = value.get("type") if isinstance(value, dict) else value
    raise UnsupportedTokenizerError(f"{source}: decoder {kind!r} with this BPE model is not supported (ByteLevel for a "
                                    "byte-level one, or none)")
