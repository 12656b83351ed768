"""Model descriptions: how a piece becomes token ids.

* :class:`BytePairEncoding`: byte-level BPE over the piece's UTF-8 bytes, by the vocabulary's
  ranks (tiktoken's rule) or by its pair-ranked merge list (HF's), both held by its tables;
* :class:`SentencePieceBpe`: BPE over characters as SentencePiece trains it: merged by piece
  score (``sentencepiece``, llama.cpp) or by merge rank (an HF tokenizer.json, a GGUF
  ``gemma4`` file), a character with no piece taken as its UTF-8 byte pieces.

>>> SentencePieceBpe(merge_by="rank", ignore_merges=True).to_json()
{'type': 'SentencePieceBpe', 'merge_by': 'rank', 'unused': [], 'ignore_merges': True}
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Union

from .base import Stage, family

__all__ = ["BytePairEncoding", "Model", "SentencePieceBpe"]


@dataclass(frozen=True)
class BytePairEncoding(Stage):
    """Byte-level BPE: the merge order is the vocabulary's tables."""

    kind: ClassVar[str] = "BPE"


@dataclass(frozen=True)
class SentencePieceBpe(Stage):
    """BPE over a SentencePiece vocabulary's characters.

    Attributes:
        merge_by: ``"score"`` (the highest piece score first: ``sentencepiece``, llama.cpp) or
            ``"rank"`` (the lowest merge rank first, byte fallback before merging: HF).
        unused: the UNUSED pieces: a merge may make one, and it is then split back into the
            two symbols it was last made from (``"score"``).
        ignore_merges: (``"rank"``) a part that is a token is that token, as HF's
            ``ignore_merges``.
    """

    kind: ClassVar[str] = "SentencePieceBpe"
    FIELDS: ClassVar[dict] = {"merge_by": str, "unused": "strings", "ignore_merges": bool}
    merge_by: str = "score"
    unused: tuple = ()
    ignore_merges: bool = False

    def __post_init__(self) -> None:
        if self.merge_by not in ("score", "rank"):
            raise ValueError(f"merge_by is 'score' or 'rank', not {self.merge_by!r}")
        if self.ignore_merges and self.merge_by != "rank":
            raise ValueError("ignore_merges is an option of merging by rank")


Model = Union[BytePairEncoding, SentencePieceBpe]

MODEL_KINDS = family("model", BytePairEncoding, SentencePieceBpe)
