"""HF's normalizers read from a tokenizer.json into typed normalizer stages.

A loader checks each of a tokenizer.json's normalizers (a ``Sequence`` flattened) as a step
object ``{"type": T, ...}`` with HF's fields (:func:`checked_step`), and
:func:`normalizer_program` makes the typed :class:`~wordsplit.spec.Sequence` of them.

>>> normalizer_program([{"type": "NFKC"}, {"type": "Lowercase"}])
Sequence(normalizers=(Nfkc(), Lowercase()))
"""

from __future__ import annotations

from . import spec
from .errors import VocabFormatError

__all__ = ["STEP_TYPES", "checked_step", "normalizer_program"]

# The step types: HF's normalizers wordsplit runs, and ByteLevel's add_prefix_space.
STEP_TYPES = ("NFC", "NFD", "NFKC", "NFKD", "Lowercase", "StripAccents", "Strip", "Replace", "Prepend", "PrefixSpace",
              "BertNormalizer")
_PLAIN = {"NFC": spec.Nfc(), "NFD": spec.Nfd(), "NFKC": spec.Nfkc(), "NFKD": spec.Nfkd(),
          "Lowercase": spec.Lowercase(), "StripAccents": spec.StripAccents(), "PrefixSpace": spec.PrefixSpace()}


def normalizer_program(steps: list[dict]) -> spec.Sequence:
    """The normalizer that runs ``steps`` (HF's JSON objects) in order.

    Each step is ``{"type": T, ...}`` with T one of :data:`STEP_TYPES` and HF's fields:
    ``Strip`` has ``strip_left``/``strip_right``; ``Replace`` a ``pattern`` ``{"String": s}``
    or ``{"Regex": r}`` and a ``content``; ``Prepend`` a ``prepend``; ``BertNormalizer`` its
    four booleans (``strip_accents`` null: as ``lowercase``). ``PrefixSpace`` is
    ByteLevel's ``add_prefix_space`` (a space before non-empty text that does not start with one),
    which the loader moves here when ByteLevel is the first pre-tokenizer.

    Raises:
        VocabFormatError: a malformed step.

    >>> normalizer_program([{"type": "Prepend", "prepend": "_"}])
    Sequence(normalizers=(Prepend(prepend='_'),))
    """
    return spec.Sequence(tuple(checked_step(step) for step in steps))


def checked_step(step: object) -> spec.Stage:
    """``step`` as a typed normalizer step, or the error that says what is wrong with it."""
    def bad(why: str) -> VocabFormatError:
        return VocabFormatError(f"normalizer step {step!r}: {why}")

    if not isinstance(step, dict) or step.get("type") not in STEP_TYPES:
        raise bad(f"a step is an object whose 'type' is one of {', '.join(STEP_TYPES)}")
    kind = step["type"]
    if kind == "Strip":
        left, right = step.get("strip_left", True), step.get("strip_right", True)
        if not isinstance(left, bool) or not isinstance(right, bool):
            raise bad("strip_left and strip_right are booleans")
        return spec.Strip(left=left, right=right)
    if kind == "Replace":
        pattern, content = step.get("pattern"), step.get("content")
        if not (isinstance(pattern, dict) and len(pattern) == 1 and set(pattern) <= {"String", "Regex"}
                and isinstance(next(iter(pattern.values())), str)) or not isinstance(content, str):
            raise bad("Replace needs a pattern {'String': ...} or {'Regex': ...} and a string content")
        return spec.Replace(pattern=next(iter(pattern.values())), content=content, regex="Regex" in pattern)
    if kind == "BertNormalizer":
        flags = {key: step.get(key, True) for key in ("clean_text", "handle_chinese_chars", "lowercase")}
        # HF's strip_accents: None follows lowercase.
        flags["strip_accents"] = step.get("strip_accents")
        if flags["strip_accents"] is None:
            flags["strip_accents"] = flags["lowercase"]
        if not all(isinstance(value, bool) for value in flags.values()):
            raise bad("BertNormalizer's clean_text, handle_chinese_chars, strip_accents and lowercase are booleans")
        return spec.BertNormalizer(**flags)
    if kind == "Prepend":
        if not isinstance(step.get("prepend"), str):
            raise bad("Prepend needs a string 'prepend'")
        return spec.Prepend(step["prepend"])
    return _PLAIN[kind]
