r"""Split programs: the data that describes a tokenizer.json pre-tokenizer pipeline of ``Split``
steps, as a vocabulary records it in its ``pattern``.

A split program is the text ``hf-split:`` followed by the JSON list of its steps
(:func:`split_program`). Each step is ``{"pattern": regex, "behavior": ..., "invert": bool}``
(HF's ``Split``) or :data:`PREFIX_SPACE_STEP` (ByteLevel's ``add_prefix_space`` after other
steps). The spanner that runs a program is :class:`wordsplit.spanners.hf_split.HFSplitSpanner`;
this module only writes, reads and checks the description, so file loaders need no spanner.

>>> pattern = split_program([{"pattern": "[a-z]+", "behavior": "Isolated", "invert": False}])
>>> is_split_program(pattern), parse_split_program(pattern)[0]["behavior"]
(True, 'Isolated')
"""

from __future__ import annotations

import json
from typing import Any

from .errors import UnsupportedTokenizerError, VocabFormatError
from .patterns import MAX_GROUP_DEPTH, group_depth

__all__ = ["BEHAVIORS", "PREFIX_SPACE_STEP", "PROGRAM_PREFIX", "checked_step", "is_split_program",
           "parse_split_program", "split_program"]

PROGRAM_PREFIX = "hf-split:"
BEHAVIORS = ("Isolated", "Removed", "MergedWithPrevious", "MergedWithNext", "Contiguous")

# The step that puts a space before each piece that does not start with one (HF's ByteLevel
# add_prefix_space, NormalizedString::prepend), placed before ByteLevel's own regex step.
PREFIX_SPACE_STEP = {"add_prefix_space": True}


def split_program(steps: list[dict[str, Any]]) -> str:
    """The ``pattern`` string of a vocabulary whose pre-tokenizer is these Split steps.

    Each step is ``{"pattern": regex, "behavior": one of BEHAVIORS, "invert": bool}``, or
    ``{"add_prefix_space": True}`` (:data:`PREFIX_SPACE_STEP`); an empty list means the whole
    text is one piece.

    >>> split_program([{"pattern": r"\\s+", "behavior": "Contiguous", "invert": True}])
    'hf-split:[{"behavior":"Contiguous","invert":true,"pattern":"\\\\\\\\s+"}]'
    """
    return PROGRAM_PREFIX + json.dumps(
        [checked_step(step, "split program") for step in steps], sort_keys=True, separators=(",", ":"),
        ensure_ascii=False,
    )


def is_split_program(pattern: object) -> bool:
    """True for a pattern made by :func:`split_program`."""
    return isinstance(pattern, str) and pattern.startswith(PROGRAM_PREFIX)


def parse_split_program(pattern: str) -> list[dict[str, Any]]:
    """The steps of a split program.

    Raises:
        VocabFormatError: not a well-formed split program.
    """
    if not is_split_program(pattern):
        raise VocabFormatError(f"{pattern[:60]!r} is not a split program (it starts with {PROGRAM_PREFIX!r})")
    try:
        steps = json.loads(pattern[len(PROGRAM_PREFIX):])
    except (json.JSONDecodeError, RecursionError):
        raise VocabFormatError(f"the split program {pattern[:80]!r} is not valid JSON") from None
    if not isinstance(steps, list):
        raise VocabFormatError(f"the split program {pattern[:80]!r} must hold a list of steps")
    return [checked_step(step, "split program") for step in steps]


def checked_step(step: Any, source: str) -> dict[str, Any]:
    """``step`` as a well-formed program step, or the error that says what is wrong with it."""
    if step == PREFIX_SPACE_STEP:
        return dict(PREFIX_SPACE_STEP)
    if not isinstance(step, dict) or set(step) != {"pattern", "behavior", "invert"}:
        raise VocabFormatError(
            f"{source}: a split step is {{'pattern', 'behavior', 'invert'}} or {PREFIX_SPACE_STEP}, got {step!r}"
        )
    pattern, behavior, invert = step["pattern"], step["behavior"], step["invert"]
    if not isinstance(pattern, str) or behavior not in BEHAVIORS or not isinstance(invert, bool):
        raise VocabFormatError(
            f"{source}: bad split step {step!r} (pattern: a str; behavior: one of {', '.join(BEHAVIORS)}; "
            "invert: a bool)"
        )
    if group_depth(pattern) > MAX_GROUP_DEPTH:
        raise UnsupportedTokenizerError(
            f"{source}: the split pattern nests groups more than {MAX_GROUP_DEPTH} deep: {pattern[:80]!r}..."
        )
    return {"pattern": pattern, "behavior": behavior, "invert": invert}
