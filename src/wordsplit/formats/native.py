"""The file readers' native fast paths: the only way the formats reach the Rust core
(``crates/wordsplit-py/src/formats.rs``), through :mod:`wordsplit.core`.

Each function gives the core's answer, or None when the extension is not built or the core
leaves the input to the Python reader (which then reads it, and words any error).

>>> rank_pairs([b"a", b"b", b"ab"]) in (None, [None, None, (0, 1)])
True
"""

from __future__ import annotations

from typing import Optional, Sequence

from ..core import extension

__all__ = ["available", "gemma4_merge_pairs", "gguf_metadata", "gguf_scan_head", "is_packed_strings", "rank_pairs",
           "score_merge_pairs", "sentencepiece_model"]


def available() -> bool:
    """Whether the native readers are there."""
    return extension() is not None


def rank_pairs(tokens: Sequence[Optional[bytes]]) -> Optional[list]:
    """:func:`wordsplit.formats.merges.rank_pairs` computed by the core."""
    core = extension()
    return None if core is None else core.rank_pairs(list(tokens))


def sentencepiece_model(data: bytes) -> Optional[dict]:
    """A SentencePiece model's tables as the core parses them (see
    :func:`wordsplit.formats.sentencepiece.sentencepiece_vocab`)."""
    core = extension()
    return None if core is None else core.sentencepiece_model(data)


def score_merge_pairs(texts: list[str], scores: list[float], types: list[int]) -> Optional[bytes]:
    """A SentencePiece model's merges by score, packed, as the core finds them."""
    core = extension()
    return None if core is None else core.score_merge_pairs(texts, scores, types)


def gguf_scan_head(buffer: bytearray) -> Optional[tuple[int, int]]:
    """The core's walk over a GGUF file's first bytes: ``(status, n)`` (0: the metadata ends
    at ``n``; 1: ``n`` bytes are needed; else not walkable)."""
    core = extension()
    return None if core is None else core.gguf_scan_head(buffer)


def gguf_metadata(data: bytes, packed: Sequence[str]) -> Optional[dict]:
    """A GGUF file's metadata as the core reads it, the string arrays under ``packed`` as
    ``PackedStrings``."""
    core = extension()
    return None if core is None else core.gguf_metadata(data, list(packed))


def is_packed_strings(value: object) -> bool:
    """Whether ``value`` is the core's ``PackedStrings`` (an array of strings)."""
    core = extension()
    return core is not None and isinstance(value, core.PackedStrings)


def gemma4_merge_pairs(tokens, types, merges):
    """A GGUF ``gemma4`` file's merges resolved by the core, or None (see
    :func:`wordsplit.formats.gguf.spm.read_gemma4_gguf`)."""
    core = extension()
    return None if core is None else core.gemma4_merge_pairs(tokens, types, merges)
