r"""HF's ``Split`` pre-tokenizers read into :class:`~wordsplit.spec.SplitProgram` steps.

A loader checks each tokenizer.json ``Split`` (or a pre-tokenizer HF runs as one) as a step
object ``{"pattern": regex, "behavior": ..., "invert": bool}`` (:func:`checked_step`), and
:func:`split_program` makes the typed program of them; :data:`PREFIX_SPACE_STEP` stands for
ByteLevel's ``add_prefix_space`` after other steps.

>>> split_program([{"pattern": "[a-z]+", "behavior": "Isolated", "invert": False}]).steps[0].behavior
'Isolated'
"""

from __future__ import annotations

from typing import Any

from .errors import UnsupportedTokenizerError, VocabFormatError
from .patterns import MAX_GROUP_DEPTH, group_depth
from .spec import BEHAVIORS, PrefixSpaceStep, Split, SplitProgram

__all__ = ["PREFIX_SPACE_STEP", "checked_step", "split_program"]

# The step that puts a space before each piece that does not start with one (HF's ByteLevel
# add_prefix_space, NormalizedString::prepend), placed before ByteLevel's own regex step.
PREFIX_SPACE_STEP = {"add_prefix_space": True}


def split_program(steps: list[dict[str, Any]]) -> SplitProgram:
    """The program of these checked step objects (:func:`checked_step`, or
    :data:`PREFIX_SPACE_STEP`); an empty list means the whole text is one piece.

    >>> split_program([{"add_prefix_space": True}]).drops_text
    True
    """
    return SplitProgram(tuple(
        PrefixSpaceStep() if step == PREFIX_SPACE_STEP else Split(step["pattern"], step["behavior"], step["invert"])
        for step in (checked_step(step, "split program") for step in steps)
    ))


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
