"""Normalizer programs: the data that describes a tokenizer.json normalizer (HF's Lowercase,
Replace, Strip, StripAccents, Prepend, the Unicode forms, in sequence) as a vocabulary records
it in its ``normalizer`` name.

A program is the registry name ``hf-normalizer:`` + the JSON list of its steps
(:func:`normalizer_program`). This module writes, reads and checks that description, so file
loaders need no normalizer; :class:`wordsplit.normalizers.ProgramNormalizer` is what runs it.

>>> name = normalizer_program([{"type": "NFKC"}, {"type": "Lowercase"}])
>>> name, parse_normalizer_program(name)[1]
('hf-normalizer:[{"type":"NFKC"},{"type":"Lowercase"}]', {'type': 'Lowercase'})
"""

from __future__ import annotations

import json

from .errors import VocabFormatError

__all__ = ["NORMALIZER_PREFIX", "STEP_TYPES", "checked_step", "normalizer_program", "parse_normalizer_program"]

NORMALIZER_PREFIX = "hf-normalizer:"
# The step types: HF's normalizers wordsplit runs, and ByteLevel's add_prefix_space.
STEP_TYPES = ("NFC", "NFD", "NFKC", "NFKD", "Lowercase", "StripAccents", "Strip", "Replace", "Prepend", "PrefixSpace")


def normalizer_program(steps: list[dict]) -> str:
    """The registry name of the normalizer that runs ``steps`` in order.

    Each step is ``{"type": T, ...}`` with T one of :data:`STEP_TYPES` and HF's fields:
    ``Strip`` has ``strip_left``/``strip_right``; ``Replace`` a ``pattern`` ``{"String": s}``
    or ``{"Regex": r}`` and a ``content``; ``Prepend`` a ``prepend``. ``PrefixSpace`` is
    ByteLevel's ``add_prefix_space`` (a space before non-empty text that does not start with one),
    which the loader moves here when ByteLevel is the first pre-tokenizer.

    Raises:
        VocabFormatError: a malformed step.

    >>> normalizer_program([{"type": "Prepend", "prepend": "_"}])
    'hf-normalizer:[{"prepend":"_","type":"Prepend"}]'
    """
    return NORMALIZER_PREFIX + json.dumps([checked_step(step) for step in steps], sort_keys=True,
                                          separators=(",", ":"), ensure_ascii=False)


def checked_step(step: object) -> dict:
    """``step`` as a well-formed program step, or the error that says what is wrong with it."""
    def bad(why: str) -> VocabFormatError:
        return VocabFormatError(f"normalizer step {step!r}: {why}")

    if not isinstance(step, dict) or step.get("type") not in STEP_TYPES:
        raise bad(f"a step is an object whose 'type' is one of {', '.join(STEP_TYPES)}")
    kind = step["type"]
    if kind == "Strip":
        left, right = step.get("strip_left", True), step.get("strip_right", True)
        if not isinstance(left, bool) or not isinstance(right, bool):
            raise bad("strip_left and strip_right are booleans")
        return {"type": kind, "strip_left": left, "strip_right": right}
    if kind == "Replace":
        pattern, content = step.get("pattern"), step.get("content")
        if not (isinstance(pattern, dict) and len(pattern) == 1 and set(pattern) <= {"String", "Regex"}
                and isinstance(next(iter(pattern.values())), str)) or not isinstance(content, str):
            raise bad("Replace needs a pattern {'String': ...} or {'Regex': ...} and a string content")
        return {"type": kind, "pattern": dict(pattern), "content": content}
    if kind == "Prepend":
        if not isinstance(step.get("prepend"), str):
            raise bad("Prepend needs a string 'prepend'")
        return {"type": kind, "prepend": step["prepend"]}
    return {"type": kind}


def parse_normalizer_program(name: str) -> list[dict]:
    """The steps of a normalizer program.

    Raises:
        VocabFormatError: not a well-formed normalizer program.
    """
    if not name.startswith(NORMALIZER_PREFIX):
        raise VocabFormatError(f"{name[:60]!r} is not a normalizer program (it starts with {NORMALIZER_PREFIX!r})")
    try:
        steps = json.loads(name[len(NORMALIZER_PREFIX):])
    except (json.JSONDecodeError, RecursionError):
        raise VocabFormatError(f"the normalizer program {name[:80]!r} is not valid JSON") from None
    if not isinstance(steps, list):
        raise VocabFormatError(f"the normalizer program {name[:80]!r} must hold a list of steps")
    return [checked_step(step) for step in steps]
