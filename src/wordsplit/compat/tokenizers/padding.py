r"""Padding as HF ``tokenizers`` 0.23 does it: the ``padding`` of a ``tokenizer.json`` (or of
``enable_padding``), ``Encoding.pad`` and ``pad_encodings``.

HF pads after the post-processor: each encoding of one ``encode`` (to a fixed length, or to
its own length rounded up to ``pad_to_multiple_of``), and the encodings of an
``encode_batch`` once more together, to the longest of them (``BatchLongest``). The
overflowing parts are padded to the same length as the encoding that holds them; an
encoding already as long or longer is left as it is.

>>> from wordsplit.postprocess import Parts
>>> parts = Parts.of([5, 6], ["a", "b"], [(0, 1), (1, 2)], [0, 1], type_id=0)
>>> pad_encodings([parts], PaddingParams(length=3, direction="left", pad_id=9))
>>> parts.ids, parts.attention_mask, parts.special_tokens_mask, parts.tokens
([9, 5, 6], [0, 1, 1], [1, 0, 0], ['[PAD]', 'a', 'b'])
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from ...errors import VocabFormatError
from ...postprocess import Parts
from .truncation import DIRECTIONS, unsigned

__all__ = ["PaddingParams", "pad", "pad_encodings", "round_up"]


@dataclass(frozen=True)
class PaddingParams:
    """HF's ``PaddingParams``: ``length`` None pads to the longest of a batch (``BatchLongest``),
    a number to that length (``Fixed``); ``direction`` is ``"right"`` or ``"left"``."""

    length: Optional[int] = None
    direction: str = "right"
    pad_to_multiple_of: Optional[int] = None
    pad_id: int = 0
    pad_type_id: int = 0
    pad_token: str = "[PAD]"

    @classmethod
    def of(cls, direction: str = "right", pad_id: Any = 0, pad_type_id: Any = 0, pad_token: str = "[PAD]",
           length: Any = None, pad_to_multiple_of: Any = None) -> "PaddingParams":
        """The settings ``enable_padding`` takes, checked as HF's binding checks them.

        Raises:
            ValueError: an unknown direction; OverflowError: a negative number; TypeError: a
                value of the wrong type.
        """
        if direction not in DIRECTIONS:
            raise ValueError(f"Unknown `direction`: `{direction}`. Use one of `left` or `right`")
        if not isinstance(pad_token, str):
            raise TypeError(f"pad_token must be a str, not {type(pad_token).__name__}")
        return cls(None if length is None else unsigned(length, "length"), direction,
                   None if pad_to_multiple_of is None else unsigned(pad_to_multiple_of, "pad_to_multiple_of"),
                   unsigned(pad_id, "pad_id"), unsigned(pad_type_id, "pad_type_id"), pad_token)

    @classmethod
    def from_json(cls, value: Any, source: str) -> Optional["PaddingParams"]:
        """The ``padding`` entry of a tokenizer.json (None for null).

        Raises:
            VocabFormatError: an entry HF would not read.
        """
        if value is None:
            return None
        directions = {file: name for name, file in DIRECTIONS.items()}
        strategy = value.get("strategy") if isinstance(value, dict) else None
        fixed = strategy.get("Fixed") if isinstance(strategy, dict) and len(strategy) == 1 else None
        multiple = value.get("pad_to_multiple_of") if isinstance(value, dict) else None
        if (not isinstance(value, dict) or not (strategy == "BatchLongest" or _count(fixed))
                or value.get("direction") not in directions or not (multiple is None or _count(multiple))
                or not _count(value.get("pad_id")) or not _count(value.get("pad_type_id"))
                or not isinstance(value.get("pad_token"), str)):
            raise VocabFormatError(f"{source}: padding must be null or an object with strategy (BatchLongest or "
                                   "{\"Fixed\": length}), direction (Left or Right), pad_to_multiple_of (null or a "
                                   f"number), pad_id, pad_type_id and pad_token, not {value!r}")
        return cls(fixed, directions[value["direction"]], multiple, value["pad_id"], value["pad_type_id"],
                   value["pad_token"])

    def to_json(self) -> dict:
        """The entry of a tokenizer.json, as HF writes it."""
        return {"strategy": "BatchLongest" if self.length is None else {"Fixed": self.length},
                "direction": DIRECTIONS[self.direction], "pad_to_multiple_of": self.pad_to_multiple_of,
                "pad_id": self.pad_id, "pad_type_id": self.pad_type_id, "pad_token": self.pad_token}

    def to_dict(self) -> dict:
        """What HF's ``Tokenizer.padding`` property gives."""
        return {"length": self.length, "pad_to_multiple_of": self.pad_to_multiple_of, "pad_id": self.pad_id,
                "pad_token": self.pad_token, "pad_type_id": self.pad_type_id, "direction": self.direction}


def _count(value: Any) -> bool:
    return type(value) is int and value >= 0


def round_up(length: int, multiple: Optional[int]) -> int:
    """``length`` rounded up to a multiple of ``multiple`` (None or 0: as it is)."""
    if multiple and length % multiple:
        length += multiple - length % multiple
    return length


def pad(parts: Parts, length: int, pad_id: int = 0, pad_type_id: int = 0, pad_token: str = "[PAD]",
        direction: str = "right") -> None:
    """HF's ``Encoding::pad``: the overflowing parts first, then this one if shorter than
    ``length``; padding on the left moves the sequence ranges with the tokens."""
    for part in parts.overflowing:
        pad(part, length, pad_id, pad_type_id, pad_token, direction)
    missing = length - len(parts.ids)
    if missing <= 0:
        return
    fills = (("ids", pad_id), ("type_ids", pad_type_id), ("tokens", pad_token), ("word_ids", None),
             ("attention_mask", 0), ("special_tokens_mask", 1), ("offsets", (0, 0)))
    for name, value in fills:
        values = getattr(parts, name)
        setattr(parts, name, [value] * missing + values if direction == "left" else values + [value] * missing)
    if direction == "left":
        parts.sequence_ranges = {sequence: (start + missing, stop + missing)
                                 for sequence, (start, stop) in parts.sequence_ranges.items()}


def pad_encodings(encodings: list[Parts], params: Optional[PaddingParams]) -> None:
    """HF's ``pad_encodings``: every encoding to ``params.length`` (None: the longest of them),
    rounded up to ``pad_to_multiple_of``."""
    if params is None or not encodings:
        return
    length = params.length if params.length is not None else max(len(parts.ids) for parts in encodings)
    length = round_up(length, params.pad_to_multiple_of)
    for parts in encodings:
        pad(parts, length, params.pad_id, params.pad_type_id, params.pad_token, params.direction)
