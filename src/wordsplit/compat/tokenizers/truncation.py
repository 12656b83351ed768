r"""Truncation as HF ``tokenizers`` 0.23 does it: the ``truncation`` of a ``tokenizer.json``
(or of ``enable_truncation``), ``Encoding.truncate`` with its stride and overflowing parts, and
the strategies that share ``max_length`` between the two texts of a pair.

HF truncates each text's encoding before the post-processor runs, to ``max_length`` less the
tokens the post-processor adds (with ``add_special_tokens``). Its arithmetic is on unsigned
integers, and this module keeps it: a ``max_length`` below the number of added tokens wraps
around to a huge length, so nothing is truncated (HF's release builds do not check). Where HF
panics (a stride not below the length it truncates to) :class:`TruncationError` is raised, and
so it is where HF returns its truncation errors.

>>> from wordsplit.postprocess import Parts
>>> parts = Parts.of([5, 6, 7, 8], list("abcd"), [(i, i + 1) for i in range(4)], [0, 1, 2, 3], type_id=0)
>>> truncate(parts, 2, stride=1)
>>> parts.ids, [part.ids for part in parts.overflowing]
([5, 6], [[6, 7], [7, 8]])
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, replace
from typing import Any, Optional

from ...errors import VocabFormatError, WordsplitError
from ...postprocess import Parts

__all__ = ["TruncationError", "TruncationParams", "truncate", "truncate_encodings", "usize_sub"]

#: The strategies, by the names of the Python API and of the file.
STRATEGIES = {"longest_first": "LongestFirst", "only_first": "OnlyFirst", "only_second": "OnlySecond"}
DIRECTIONS = {"left": "Left", "right": "Right"}
_USIZE = 1 << 64  # HF's lengths are usize: its subtraction wraps around at this


class TruncationError(WordsplitError, ValueError):
    """A text cannot be truncated as the settings ask (HF's truncation errors and its panics)."""


def usize_sub(a: int, b: int) -> int:
    """``a - b`` as Rust's release builds compute it on ``usize``: wrapped below 0."""
    return (a - b) % _USIZE


def unsigned(value: Any, what: str) -> int:
    """``value`` as the unsigned integer HF's binding extracts (its errors too)."""
    number = operator.index(value)
    if number < 0:
        raise OverflowError(f"can't convert negative int to unsigned ({what})")
    return number


@dataclass(frozen=True)
class TruncationParams:
    """HF's ``TruncationParams``, with the Python API's names (``"longest_first"``, ``"right"``)."""

    max_length: int
    stride: int = 0
    strategy: str = "longest_first"
    direction: str = "right"

    @classmethod
    def of(cls, max_length: Any, stride: Any = 0, strategy: str = "longest_first",
           direction: str = "right") -> "TruncationParams":
        """The settings ``enable_truncation`` takes, checked as HF's binding checks them.

        Raises:
            ValueError: an unknown strategy or direction; OverflowError: a negative length or stride.
        """
        if strategy not in STRATEGIES:
            raise ValueError(f"Unknown `strategy`: `{strategy}`. Use one of `longest_first`, `only_first`, or "
                             "`only_second`")
        if direction not in DIRECTIONS:
            raise ValueError(f"Unknown `direction`: `{direction}`. Use one of `left` or `right`.")
        return cls(unsigned(max_length, "max_length"), unsigned(stride, "stride"), strategy, direction)

    @classmethod
    def from_json(cls, value: Any, source: str) -> Optional["TruncationParams"]:
        """The ``truncation`` entry of a tokenizer.json (None for null).

        Raises:
            VocabFormatError: an entry HF would not read.
        """
        if value is None:
            return None
        strategies = {file: name for name, file in STRATEGIES.items()}
        directions = {file: name for name, file in DIRECTIONS.items()}
        if (not isinstance(value, dict) or value.get("strategy") not in strategies
                or value.get("direction", "Right") not in directions
                or not all(type(value.get(key)) is int and value[key] >= 0 for key in ("max_length", "stride"))):
            raise VocabFormatError(f"{source}: truncation must be null or an object with max_length and stride "
                                   f"(integers of at least 0), strategy (LongestFirst, OnlyFirst or OnlySecond) "
                                   f"and direction (Left or Right), not {value!r}")
        return cls(value["max_length"], value["stride"], strategies[value["strategy"]],
                   directions[value.get("direction", "Right")])

    def to_json(self) -> dict:
        """The entry of a tokenizer.json, as HF writes it."""
        return {"direction": DIRECTIONS[self.direction], "max_length": self.max_length,
                "strategy": STRATEGIES[self.strategy], "stride": self.stride}

    def to_dict(self) -> dict:
        """What HF's ``Tokenizer.truncation`` property gives."""
        return {"max_length": self.max_length, "stride": self.stride, "strategy": self.strategy,
                "direction": self.direction}

    def for_added(self, added: int) -> "TruncationParams":
        """The settings the texts are truncated with when the post-processor adds ``added``
        tokens (HF's length less them, wrapping as HF's does)."""
        return replace(self, max_length=usize_sub(self.max_length, added)) if added else self


def truncate(parts: Parts, max_length: int, stride: int = 0, direction: str = "right") -> None:
    """HF's ``Encoding::truncate``: keep ``max_length`` tokens (the first, or the last with
    ``direction="left"``); the others become the ``overflowing`` windows, each overlapping the
    one before by ``stride`` tokens. The sequence ranges are dropped; with ``max_length`` 0
    the whole encoding becomes the only overflowing part.

    Raises:
        TruncationError: ``stride`` not below ``max_length`` when tokens are cut (HF panics).
    """
    n = len(parts.ids)
    if max_length >= n:
        return
    if max_length == 0:
        whole = Parts(parts.ids, parts.tokens, parts.offsets, parts.word_ids, parts.type_ids,
                      parts.special_tokens_mask, parts.attention_mask, parts.overflowing, parts.sequence_ranges)
        _become(parts, Parts(overflowing=[whole]))
        return
    if stride >= max_length:
        raise TruncationError(f"`stride` must be strictly less than `max_len={max_length}` (note that `max_len` may "
                              "be shorter than the max length of the original model, as it subtracts the number of "
                              "special characters)")
    step = max_length - stride
    windows = []
    if direction == "right":
        for start in range(0, n, step):
            stop = min(start + max_length, n)
            windows.append((start, stop))
            if stop == n:
                break
    else:
        for last in range(n - 1, -1, -step):
            start = max(last + 1 - max_length, 0)
            windows.append((start, last + 1))
            if start == 0:
                break
    pieces = [_slice(parts, start, stop) for start, stop in windows]
    pieces[0].overflowing = pieces[1:]
    _become(parts, pieces[0])


def _slice(parts: Parts, start: int, stop: int) -> Parts:
    return Parts(parts.ids[start:stop], parts.tokens[start:stop], parts.offsets[start:stop],
                 parts.word_ids[start:stop], parts.type_ids[start:stop], parts.special_tokens_mask[start:stop],
                 parts.attention_mask[start:stop])


def _become(parts: Parts, other: Parts) -> None:
    for name in ("ids", "tokens", "offsets", "word_ids", "type_ids", "special_tokens_mask", "attention_mask",
                 "overflowing", "sequence_ranges"):
        setattr(parts, name, getattr(other, name))


def truncate_encodings(encoding: Parts, pair: Optional[Parts], params: TruncationParams) -> None:
    """HF's ``truncate_encodings``: the encodings of a text (and of its pair), truncated in
    place so that together they hold at most ``params.max_length`` tokens.

    ``longest_first`` cuts the longer text down to what the shorter one leaves, and when that
    is not enough both to half of ``max_length`` (the longer one keeps the odd token);
    ``only_first`` and ``only_second`` cut that text alone.

    Raises:
        TruncationError: ``only_second`` without a pair, or a text too short to give up the
            tokens asked (HF's errors); a stride HF panics on (:func:`truncate`).
    """
    stride, direction = params.stride, params.direction
    if params.max_length == 0:
        truncate(encoding, 0, stride, direction)
        if pair is not None:
            truncate(pair, 0, stride, direction)
        return
    total = len(encoding.ids) + (len(pair.ids) if pair is not None else 0)
    if total <= params.max_length:
        return
    to_remove = total - params.max_length
    if params.strategy == "longest_first":
        if pair is None:
            truncate(encoding, total - to_remove, stride, direction)
            return
        n1, n2 = len(encoding.ids), len(pair.ids)
        swap = n1 > n2
        if swap:
            n1, n2 = n2, n1
        n2 = n1 if n1 > params.max_length else max(n1, params.max_length - n1)
        if n1 + n2 > params.max_length:
            n1 = params.max_length // 2
            n2 = n1 + params.max_length % 2
        if swap:
            n1, n2 = n2, n1
        truncate(encoding, n1, stride, direction)
        truncate(pair, n2, stride, direction)
        return
    if params.strategy == "only_first":
        target = encoding
    elif pair is not None:
        target = pair
    else:
        raise TruncationError("Truncation error: Second sequence not provided")
    if len(target.ids) <= to_remove:
        raise TruncationError("Truncation error: Sequence to truncate too short to respect the provided max_length")
    truncate(target, len(target.ids) - to_remove, stride, direction)
